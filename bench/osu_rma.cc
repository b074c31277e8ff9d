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
  return static_cast<int>(std::clamp<size_t>((size_t{16} << 20) / bytes, 1, kMaxPerEpoch));
}

std::vector<size_t> Sizes(Op op) {
  if (op == Op::kFetchAndOp || op == Op::kCompareAndSwap) return {8};
  std::vector<size_t> sizes;
  for (size_t bytes = 8; bytes < kMaxBytes; bytes *= 8) sizes.push_back(bytes);
  sizes.push_back(kMaxBytes);
  return sizes;  // 8, 64, 512, 4K, 32K, 256K, 2M, 4M
}

bool TimedInQuickMode(size_t bytes) { return bytes == 8 || bytes == 32768; }

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
    WindowPair windows(kMaxBytes, pair);
    char* peer = origin ? MappedPeer(windows.shim.win, kTarget) : nullptr;
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
            const double native = MeasureOp(pair, windows.native.win, sync, op, bytes,
                                            per_epoch, buffers, batch_ms);
            const double shim = MeasureOp(pair, windows.shim.win, sync, op, bytes,
                                          per_epoch, buffers, batch_ms);
            table.Add({Name(op), Name(sync), per_epoch == 1 ? "latency" : "bandwidth",
                       std::to_string(bytes), std::to_string(per_epoch), Num(native, 4),
                       Num(shim, 4), Num(floor_us, 4), Ratio(native, shim),
                       Ratio(shim, floor_us), Num(bytes / native, 1), Num(bytes / shim, 1),
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
