// OSU-style latency, bandwidth and message rate of put, get, accumulate,
// fetch_and_op and compare_and_swap under five synchronization modes (flush,
// lock, lock_all, fence, PSCW), 8 B to 4 MiB, native MPICH window vs rmashim
// window in the same run, with the CPU floor. Rank 0 is the origin, rank 1
// the target; other ranks idle.
//   latency:   one operation per epoch (OSU's *_latency);
//   bandwidth: a window of operations per epoch (OSU's *_bw); its message
//              rate is the inverse of the time per operation.
// Every (operation, mode, size) is also checked for correctness on both
// windows; with --quick all sizes are still checked but only a few timed.
// With --create both windows are MPI_Win_create windows on page-aligned
// memory of the program's own (OSU's default), which the shim reaches with
// cross-memory calls (shim/move/cross_memory.h); there is no CPU floor then.
//
// MPI-only apart from an optional dlsym of the shim, so scripts/bench_sweep.sh
// also builds it with mpicxx.openmpi and runs it on Open MPI's osc/sm (the
// peer column): both windows are then osc/sm windows, and the floor runs on
// an MPI_Win_allocate_shared window's memory (the same kind of memory).
#include <mpi.h>

#include <algorithm>
#include <map>
#include <vector>

#include "bench/bench_util.h"
#include "bench/pair_rma.h"

namespace {

using namespace rmashim_bench;  // NOLINT

constexpr size_t kMaxBytes = size_t{4} << 20;
constexpr int kMaxPerEpoch = 64;

// OSU's window of 64 operations in flight, capped at 16 MiB per epoch so
// the large sizes stay within the sweep's time budget.
int PerEpoch(size_t bytes) {
  return static_cast<int>(
      std::clamp<size_t>((size_t{16} << 20) / bytes, 1, kMaxPerEpoch));
}

std::vector<size_t> Sizes(Op op) {
  if (op == Op::kFetchAndOp || op == Op::kCompareAndSwap) return {8};
  std::vector<size_t> sizes;
  for (size_t bytes = 8; bytes < kMaxBytes; bytes *= 8) sizes.push_back(bytes);
  sizes.push_back(kMaxBytes);
  return sizes;  // 8, 64, 512, 4K, 32K, 256K, 2M, 4M
}

bool TimedInQuickMode(size_t bytes) { return bytes == 8 || bytes == 32768; }

// The target's window memory mapped into the origin, for the CPU floor
// (nullptr elsewhere, or when there is none). MPICH: the shim's mapping of
// its window (none without the shim). Open MPI: its MPI_Win_shared_query
// answers only for shared windows (MPI_ERR_RMA_FLAVOR on MPI_Win_allocate's),
// so the floor gets a shared window of its own when the pair shares a node.
class FloorTarget {
 public:
  FloorTarget(const WindowPair& windows, MPI_Comm pair, bool create) {
    const bool origin = Rank(pair) == kOrigin;
    if (create) return;  // no mapped memory to measure a floor on
#ifdef OPEN_MPI
    (void)windows;
    MPI_Comm node;
    MPI_Comm_split_type(pair, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (Size(node) == Size(pair)) {
      char* base = nullptr;
      MPI_Win_allocate_shared(origin ? 0 : kMaxBytes, 1, MPI_INFO_NULL, pair,
                              &base, &shared_);
      MPI_Aint size = 0;
      int unit = 0;
      MPI_Win_shared_query(shared_, kTarget, &size, &unit, &peer_);
      if (!origin) peer_ = nullptr;
    }
    MPI_Comm_free(&node);
#else
    (void)pair;
    if (origin) peer_ = MappedPeer(windows.shim.win, kTarget);
#endif
  }
  ~FloorTarget() {
    if (shared_ != MPI_WIN_NULL) MPI_Win_free(&shared_);
  }
  FloorTarget(const FloorTarget&) = delete;
  FloorTarget& operator=(const FloorTarget&) = delete;

  char* peer() const { return peer_; }

 private:
  MPI_Win shared_ = MPI_WIN_NULL;
  char* peer_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  RequireRanks(2);
  const Flags flags = ParseFlags(argc, argv);
  Verifier verifier("osu_rma");
  MPI_Comm pair = PairComm();
  if (pair != MPI_COMM_NULL) {
    const bool origin = Rank(pair) == kOrigin;
    const double batch_ms = BatchMs(flags);
    WindowPair windows(kMaxBytes, pair, flags.create);
    FloorTarget floor_target(windows, pair, flags.create);
    char* peer = floor_target.peer();
    OpBuffers buffers(kMaxBytes, kMaxPerEpoch);
    std::map<std::pair<Op, size_t>, double> floors;  // per (op, size), any mode
    Table table({"op", "sync", "metric", "bytes", "per_epoch", "native_us",
                 "shim_us", "floor_us", "speedup", "shim/floor", "native_MBps",
                 "shim_MBps", "native_Mmsgps", "shim_Mmsgps"});
    for (Sync sync : kAllSyncs) {
      for (Op op : {Op::kPut, Op::kGet, Op::kAccumulate, Op::kFetchAndOp,
                    Op::kCompareAndSwap}) {
        for (size_t bytes : Sizes(op)) {
          for (const Window* w : {&windows.native, &windows.shim}) {
            VerifyOp(pair, w->win, w->base, sync, op, bytes, verifier, w->name);
          }
          if (flags.quick && !TimedInQuickMode(bytes)) continue;
          if (peer != nullptr && !floors.count({op, bytes})) {
            floors[{op, bytes}] = FloorUs(op, peer, bytes, buffers, batch_ms);
          }
          const double floor_us = peer != nullptr ? floors[{op, bytes}] : 0;
          for (int per_epoch : {1, PerEpoch(bytes)}) {
            const double native =
                MeasureOp(pair, windows.native.win, sync, op, bytes, per_epoch,
                          buffers, batch_ms);
            const double shim = MeasureOp(pair, windows.shim.win, sync, op,
                                          bytes, per_epoch, buffers, batch_ms);
            table.Add({Name(op), Name(sync),
                       per_epoch == 1 ? "latency" : "bandwidth",
                       std::to_string(bytes), std::to_string(per_epoch),
                       Num(native, 4), Num(shim, 4), Num(floor_us, 4),
                       Ratio(native, shim), Ratio(shim, floor_us),
                       Num(bytes / native, 1), Num(bytes / shim, 1),
                       Num(1 / native, 4), Num(1 / shim, 4)});
          }
        }
      }
    }
    if (origin) table.Print(flags.csv);
    MPI_Comm_free(&pair);
  }
  const int rc = verifier.Finish();
  MPI_Finalize();
  return rc;
}
