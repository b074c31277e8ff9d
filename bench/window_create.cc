// What window creation costs, natively and under the shim: a create/free
// cycle of MPI_Win_allocate (4 KiB a rank) and of MPI_Win_create over a
// malloc'd 64-byte buffer, each followed by a fence epoch with one put so
// the window is used; and the time to create `--live` MPI_Win_create
// windows that stay alive together (over separate malloc'd buffers), then
// to free them. On a host with more ranks than cores this is where MPICH's
// never-yielding waits show (shim/base/ucx_progress.cc). Run it once with
// nothing preloaded and once with librmashim.so; scripts/bench_windows.sh
// does both, for several rank counts, and prints one table.
//   window_create [--cycles N] [--live N] [--label L]
// Prints "WINDOWS|label|case|value|unit" lines (rank 0), each value the
// median over the ranks' own means.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

int Rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int Size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// A put to the next rank in a fence epoch, checked: a window that was
// created but could not be used would not count.
void UseWindow(MPI_Win win, int64_t* mine, int64_t value) {
  const int rank = Rank(), size = Size();
  *mine = -1;
  MPI_Win_fence(0, win);
  MPI_Put(&value, 1, MPI_INT64_T, (rank + 1) % size, 0, 1, MPI_INT64_T, win);
  MPI_Win_fence(0, win);
  const int64_t expected = value - rank + (rank + size - 1) % size;
  if (*mine != expected) {
    std::fprintf(stderr, "window_create: rank %d read %lld, expected %lld\n",
                 rank, static_cast<long long>(*mine),
                 static_cast<long long>(expected));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

// The median over ranks of `seconds`, in microseconds, printed by rank 0.
void Report(const char* label, const char* what, double seconds) {
  const int size = Size();
  std::vector<double> all(size);
  MPI_Gather(&seconds, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0,
             MPI_COMM_WORLD);
  if (Rank() != 0) return;
  std::nth_element(all.begin(), all.begin() + size / 2, all.end());
  std::printf("WINDOWS|%s|%s|%.1f|us\n", label, what, all[size / 2] * 1e6);
}

void AllocateCycles(const char* label, int cycles, bool report = true) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int c = 0; c < cycles; ++c) {
    int64_t* base = nullptr;
    MPI_Win win;
    MPI_Win_allocate(4096, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD,
                     &base, &win);
    UseWindow(win, base, int64_t{c} * Size() + Rank());
    MPI_Win_free(&win);
  }
  const double each = (MPI_Wtime() - t0) / cycles;
  if (report) Report(label, "allocate_cycle", each);
}

void CreateCycles(const char* label, int cycles) {
  std::vector<int64_t*> buffers(cycles);
  for (auto& b : buffers) b = static_cast<int64_t*>(std::malloc(64));
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int c = 0; c < cycles; ++c) {
    MPI_Win win;
    MPI_Win_create(buffers[c], 64, sizeof(int64_t), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &win);
    UseWindow(win, buffers[c], int64_t{c} * Size() + Rank());
    MPI_Win_free(&win);
  }
  Report(label, "create_cycle", (MPI_Wtime() - t0) / cycles);
  for (auto* b : buffers) std::free(b);
}

void LiveWindows(const char* label, int live) {
  std::vector<int64_t*> buffers(live);
  for (auto& b : buffers) b = static_cast<int64_t*>(std::malloc(64));
  std::vector<MPI_Win> wins(live);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < live; ++i) {
    MPI_Win_create(buffers[i], 64, sizeof(int64_t), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &wins[i]);
  }
  Report(label, "live_create_each", (MPI_Wtime() - t0) / live);
  UseWindow(wins[live / 2], buffers[live / 2], Rank());
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  for (auto& w : wins) MPI_Win_free(&w);
  Report(label, "live_free_each", (MPI_Wtime() - t0) / live);
  for (auto* b : buffers) std::free(b);
}

int IntOption(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0)
      return std::max(1, std::atoi(argv[i + 1]));
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const char* label = "run";
  for (int i = 1; i < argc; ++i) {
    const bool known = std::strcmp(argv[i], "--cycles") == 0 ||
                       std::strcmp(argv[i], "--live") == 0 ||
                       std::strcmp(argv[i], "--label") == 0;
    if (!known || i + 1 >= argc) {
      if (Rank() == 0)
        std::fprintf(stderr, "window_create: bad argument %s\n", argv[i]);
      MPI_Finalize();
      return 2;
    }
    if (std::strcmp(argv[i], "--label") == 0) label = argv[i + 1];
    ++i;
  }
  const int cycles = IntOption(argc, argv, "--cycles", 20);
  const int live = IntOption(argc, argv, "--live", 100);
  AllocateCycles(label, 2,
                 false);  // warm-up: first segments, first connections
  AllocateCycles(label, cycles);
  CreateCycles(label, cycles);
  LiveWindows(label, live);
  MPI_Finalize();
  return 0;
}
