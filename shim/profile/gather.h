// Gathering each process's plain profile records on world rank 0 at
// MPI_Finalize (profile.cc's window records, traffic.cc's binned cells):
// one gather of the byte counts, then one gatherv of the bytes.
#ifndef RMASHIM_SHIM_PROFILE_GATHER_H_
#define RMASHIM_SHIM_PROFILE_GATHER_H_

#include <mpi.h>

#include <type_traits>
#include <vector>

namespace rmashim {

// Collective over MPI_COMM_WORLD: every process's `mine`, in rank order,
// on rank 0; empty elsewhere. T is copied as bytes.
template <typename T>
std::vector<T> GatherOnRankZero(const std::vector<T>& mine) {
  static_assert(std::is_trivially_copyable_v<T>);
  int rank = 0, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  const int bytes = static_cast<int>(mine.size() * sizeof(T));
  std::vector<int> counts(size), displs(size);
  PMPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[r] = total;
    total += counts[r];
  }
  std::vector<T> all(rank == 0 ? total / sizeof(T) : 0);
  PMPI_Gatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(),
               displs.data(), MPI_BYTE, 0, MPI_COMM_WORLD);
  return all;
}

}  // namespace rmashim

#endif  // RMASHIM_SHIM_PROFILE_GATHER_H_
