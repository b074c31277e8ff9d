// Shared pieces of the MPI benchmark drivers: windows native vs shim in the
// same run, timing, and the result table.
#ifndef RMASHIM_BENCH_BENCH_UTIL_H_
#define RMASHIM_BENCH_BENCH_UTIL_H_

#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace rmashim_bench {

// A window of `bytes` per rank; `managed` false opts out of the shim (info
// key rmashim_managed=false), so native MPICH and the shim run side by side.
inline MPI_Win AllocateWindow(bool managed, MPI_Aint bytes, void* base,
                              MPI_Comm comm = MPI_COMM_WORLD) {
  MPI_Info info;
  MPI_Info_create(&info);
  if (!managed) MPI_Info_set(info, "rmashim_managed", "false");
  MPI_Win win;
  MPI_Win_allocate(bytes, 1, info, comm, base, &win);
  MPI_Info_free(&info);
  return win;
}

inline bool ShimManages(MPI_Win win) {
  using Fn = int (*)(MPI_Win, int*);
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_win_is_managed"));
  int flag = 0;
  return fn != nullptr && fn(win, &flag) == MPI_SUCCESS && flag;
}

inline void WarnIfNotPreloaded(MPI_Win shim_win) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0 && !ShimManages(shim_win)) {
    std::fprintf(stderr,
                 "warning: librmashim.so is not preloaded; both columns are "
                 "native MPICH\n");
  }
}

// The target's window memory mapped into this process (for the CPU floor);
// nullptr when the shim does not manage the window.
inline char* MappedPeer(MPI_Win shim_win, int target) {
  MPI_Aint size = 0;
  int unit = 0;
  char* peer = nullptr;
  if (!ShimManages(shim_win) ||
      MPI_Win_shared_query(shim_win, target, &size, &unit, &peer) !=
          MPI_SUCCESS ||
      size == 0) {
    return nullptr;
  }
  return peer;
}

// Median over 7 batches of the mean time of one `op()`, in microseconds.
template <typename Op>
double TimeUs(int iters, Op op) {
  constexpr int kReps = 7;
  std::vector<double> batches;
  for (int w = 0; w < std::max(1, iters / 10); ++w) op();  // warm-up
  for (int rep = 0; rep < kReps; ++rep) {
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) op();
    batches.push_back((MPI_Wtime() - t0) * 1e6 / iters);
  }
  std::nth_element(batches.begin(), batches.begin() + kReps / 2, batches.end());
  return batches[kReps / 2];
}

// Enough iterations for ~10 ms per batch at memory speed, within bounds.
inline int Iterations(size_t bytes) {
  return static_cast<int>(
      std::clamp<size_t>((size_t{64} << 20) / (bytes + 4096), 20, 20000));
}

struct Row {
  std::string test;
  size_t bytes;
  double native_us, shim_us, floor_us;  // floor_us <= 0: no floor
  std::string note;
};

// The table (or CSV with --csv) that scripts/ and README read.
inline void PrintRows(const std::vector<Row>& rows, bool csv) {
  if (csv) {
    std::printf("test,bytes,native_us,shim_us,floor_us\n");
    for (const Row& r : rows) {
      std::printf("%s,%zu,%.4f,%.4f,%.4f\n", r.test.c_str(), r.bytes,
                  r.native_us, r.shim_us, r.floor_us);
    }
    return;
  }
  std::printf("%-22s %8s %11s %11s %11s %9s %10s\n", "test", "bytes",
              "native us", "shim us", "floor us", "speedup", "shim/floor");
  for (const Row& r : rows) {
    char floor[16] = "-", ratio[16] = "-";
    if (r.floor_us > 0) {
      std::snprintf(floor, sizeof(floor), "%.3f", r.floor_us);
      std::snprintf(ratio, sizeof(ratio), "%.2fx", r.shim_us / r.floor_us);
    }
    std::printf("%-22s %8zu %11.3f %11.3f %11s %8.1fx %10s%s%s\n",
                r.test.c_str(), r.bytes, r.native_us, r.shim_us, floor,
                r.native_us / r.shim_us, ratio, r.note.empty() ? "" : "  ",
                r.note.c_str());
  }
}

inline bool WantsCsv(int argc, char** argv) {
  return argc > 1 && std::strcmp(argv[1], "--csv") == 0;
}

}  // namespace rmashim_bench

#endif  // RMASHIM_BENCH_BENCH_UTIL_H_
