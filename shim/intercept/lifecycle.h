// Starting and stopping the shim with MPI: the process's state first
// (runtime.h), then what needs it and MPI (the flush endpoint and the post
// matching of windows spanning nodes, the agent), stopped in the reverse
// order before MPI goes away. Here, at the top, so that the process's
// state depends on nothing it starts.
#ifndef RMASHIM_SHIM_INTERCEPT_LIFECYCLE_H_
#define RMASHIM_SHIM_INTERCEPT_LIFECYCLE_H_

namespace rmashim {

// Right after PMPI_Init(_thread), with the thread level MPI provides.
// Collective over MPI_COMM_WORLD.
void StartShim(int thread_level);
// Right before PMPI_Finalize. Collective over MPI_COMM_WORLD.
void StopShim();

}  // namespace rmashim

#endif  // RMASHIM_SHIM_INTERCEPT_LIFECYCLE_H_
