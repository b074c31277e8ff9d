// Active-target synchronization, native MPICH window vs rmashim window in
// the same run: fence and PSCW epochs on a ring (every rank takes part), and
// the process-skew test of the truly one-sided paper (the target computes
// between post and wait; the origin times start + 16 puts + complete).
#include <mpi.h>

#include <vector>

#include "bench/bench_util.h"
#include "bench/pair_rma.h"

namespace {

using namespace rmashim_bench;  // NOLINT

constexpr MPI_Aint kWindowBytes = 4096;

// Mean over ranks is not needed: every rank runs the same loop; rank 0's
// time is reported.
double FenceEpoch(MPI_Win win, bool with_put) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long value = rank;
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  const double us = TimeUs(500, [&] {
    if (with_put)
      MPI_Put(&value, 1, MPI_LONG, (rank + 1) % size, 0, 1, MPI_LONG, win);
    MPI_Win_fence(0, win);
  });
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  return us;
}

double PscwEpoch(MPI_Win win) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Group world, left, right;
  MPI_Win_get_group(win, &world);
  int l = (rank + size - 1) % size, r = (rank + 1) % size;
  MPI_Group_incl(world, 1, &l, &left);
  MPI_Group_incl(world, 1, &r, &right);
  const long value = rank;
  const double us = TimeUs(500, [&] {
    MPI_Win_post(left, 0, win);
    MPI_Win_start(right, 0, win);
    MPI_Put(&value, 1, MPI_LONG, r, 0, 1, MPI_LONG, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
  });
  MPI_Group_free(&left);
  MPI_Group_free(&right);
  MPI_Group_free(&world);
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const bool csv = ParseFlags(argc, argv).csv;  // before measuring
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    if (rank == 0) std::fprintf(stderr, "needs at least 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char* base = nullptr;
  MPI_Win native = AllocateWindow(false, kWindowBytes, &base);
  MPI_Win shim = AllocateWindow(true, kWindowBytes, &base);
  WarnIfNotPreloaded(shim);
  std::vector<Row> rows;
  const std::string ranks = std::to_string(size) + " ranks";
  rows.push_back({"fence epoch (empty)", 0, FenceEpoch(native, false),
                  FenceEpoch(shim, false), 0, ranks});
  rows.push_back({"fence epoch + put", 8, FenceEpoch(native, true),
                  FenceEpoch(shim, true), 0, ranks});
  rows.push_back({"pscw ring epoch + put", 8, PscwEpoch(native),
                  PscwEpoch(shim), 0, ranks});
  const long value = 7;
  for (double compute : {0.0, 10.0, 100.0, 1000.0, 10000.0}) {
    auto skew = [&](MPI_Win win) {
      return SkewUs(MPI_COMM_WORLD, win, Sync::kPscw,
                    reinterpret_cast<const char*>(&value), sizeof(value),
                    compute, 15);
    };
    const double n = skew(native);
    const double s = skew(shim);
    rows.push_back({"skew: start+16put+compl", 8, n, s, 0,
                    "target computes " +
                        std::to_string(static_cast<int>(compute)) + " us"});
  }
  if (rank == 0) PrintRows(rows, csv);
  MPI_Win_free(&shim);
  MPI_Win_free(&native);
  MPI_Finalize();
  return 0;
}
