/* rmashim's small C interface for programs and tools that want to know what
 * the shim does. Every function is exported by librmashim.so; look it up with
 * dlsym(RTLD_DEFAULT, ...) when the shim may or may not be preloaded. */
#ifndef RMASHIM_RMASHIM_H_
#define RMASHIM_RMASHIM_H_

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Sets *flag to 1 when `win` is managed by the shim (node-local accesses go
 * through shared memory), 0 when every call on it passes through to MPI. */
int rmashim_win_is_managed(MPI_Win win, int *flag);

/* This rank's place in the machine as seen at MPI_Init: the node (world rank
 * of its first rank), rank and size within the node, NUMA domain and core
 * (logical hwloc indices, -1 when unknown). */
typedef struct {
  int node_id;
  int node_rank;
  int node_size;
  int numa_domain;
  int core;
} rmashim_locality_t;

int rmashim_get_locality(rmashim_locality_t *out);

#ifdef __cplusplus
}
#endif

#endif /* RMASHIM_RMASHIM_H_ */
