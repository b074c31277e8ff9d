// The process-skew and overlap tests of the truly one-sided intranode RMA
// paper, native MPICH window vs rmashim window in the same run. Rank 0 is
// the origin, rank 1 the target; other ranks idle.
//   skew:           the target computes inside its epoch (PSCW: between post
//                   and wait; lock: outside MPI); the origin's time for one
//                   epoch of 16 puts (the paper's Table 1, 256 KiB puts).
//   origin overlap: the origin computes Tcomp = 1.2 Tcomm after issuing 16
//                   puts and before completing them (the paper's Fig. 7a);
//   target overlap: the target computes Tcomp = 1.2 Tcomm between post and
//                   wait while the origin puts (Fig. 7c), timed at the target.
// Overlap = (Tcomm + Tcomp - Ttotal) / Tcomm: 1 when the communication is
// completely hidden behind the computation, 0 when it is not at all.
#include <mpi.h>

#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/pair_rma.h"

namespace {

using namespace rmashim_bench;  // NOLINT

constexpr int kPuts = 16;  // per epoch, as in the paper
constexpr size_t kMaxBytes = size_t{1} << 20;
constexpr double kComputeFactor = 1.2;  // Tcomp / Tcomm, as in the paper

double Overlap(double comm_us, double comp_us, double total_us) {
  return (comm_us + comp_us - total_us) / comm_us;
}

struct Measured {
  double compute_us, base_us, value;
};

// Origin side: Tcomm of an epoch of 16 puts, then with Tcomp after them.
Measured OriginOverlap(MPI_Comm pair, MPI_Win win, Sync sync, size_t bytes,
                       OpBuffers& b, double batch_ms) {
  const double comm =
      kPuts * MeasureOp(pair, win, sync, Op::kPut, bytes, kPuts, b, batch_ms);
  const double comp = kComputeFactor * comm;
  const double total = kPuts * MeasureOp(pair, win, sync, Op::kPut, bytes,
                                         kPuts, b, batch_ms, comp);
  return {comp, comm, Overlap(comm, comp, total)};
}

// Target side (PSCW): the target's time for post + compute + wait while the
// origin runs start + 16 puts + complete.
Measured TargetOverlap(MPI_Comm pair, MPI_Win win, size_t bytes, OpBuffers& b,
                       double batch_ms) {
  const bool origin = Rank(pair) == kOrigin;
  Epochs epochs(win, Sync::kPscw, origin);
  auto target_time = [&](double compute_us) {
    return TimeOnAll(
        pair, batch_ms,
        [&] {
          if (origin) {
            epochs.Run([&] {
              for (int k = 0; k < kPuts; ++k) Issue(Op::kPut, win, bytes, b, k);
            });
          } else {
            epochs.Open();
            Busy(compute_us);
            epochs.Close();
          }
        },
        kTarget);
  };
  const double comm = target_time(0);
  const double comp = kComputeFactor * comm;
  return {comp, comm, Overlap(comm, comp, target_time(comp))};
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  RequireRanks(2);
  const Flags flags = ParseFlags(argc, argv);
  Verifier verifier("overlap");
  MPI_Comm pair = PairComm();
  if (pair != MPI_COMM_NULL) {
    const double batch_ms = BatchMs(flags);
    WindowPair windows(kPuts * kMaxBytes, pair);
    OpBuffers buffers(kMaxBytes, kPuts);
    Table table({"test", "sync", "bytes", "native_compute_us",
                 "shim_compute_us", "native_base_us", "shim_base_us", "native",
                 "shim", "unit"});
    auto add = [&](const std::string& test, Sync sync, size_t bytes,
                   const Measured& n, const Measured& s, const char* unit) {
      table.Add({test, Name(sync), std::to_string(bytes), Num(n.compute_us, 1),
                 Num(s.compute_us, 1), Num(n.base_us), Num(s.base_us),
                 Num(n.value), Num(s.value), unit});
    };

    // Skew: 256 KiB puts as in the paper's Table 1.
    const size_t skew_bytes = flags.quick ? 16384 : 262144;
    const int reps = flags.quick ? 3 : 9;
    for (Sync sync : {Sync::kPscw, Sync::kLock}) {
      for (const Window* w : {&windows.native, &windows.shim}) {
        VerifyOp(pair, w->win, w->base, sync, Op::kPut, skew_bytes, verifier,
                 w->name);
      }
      auto skew = [&](const Window& w, double compute_us) {
        return SkewUs(pair, w.win, sync, buffers.src.data(), skew_bytes,
                      compute_us, reps);
      };
      const double native0 = skew(windows.native, 0),
                   shim0 = skew(windows.shim, 0);
      const std::vector<double> computes =
          flags.quick ? std::vector<double>{1000}
                      : std::vector<double>{100, 1000, 10000};
      add("skew", sync, skew_bytes, {0, native0, native0}, {0, shim0, shim0},
          "us");
      for (double c : computes) {
        add("skew", sync, skew_bytes, {c, native0, skew(windows.native, c)},
            {c, shim0, skew(windows.shim, c)}, "us");
      }
    }

    const std::vector<size_t> sizes =
        flags.quick ? std::vector<size_t>{65536}
                    : std::vector<size_t>{4096, 65536, 262144, kMaxBytes};
    for (size_t bytes : sizes) {
      for (Sync sync : {Sync::kFlush, Sync::kPscw}) {
        for (const Window* w : {&windows.native, &windows.shim}) {
          VerifyOp(pair, w->win, w->base, sync, Op::kPut, bytes, verifier,
                   w->name);
        }
        add("origin overlap", sync, bytes,
            OriginOverlap(pair, windows.native.win, sync, bytes, buffers,
                          batch_ms),
            OriginOverlap(pair, windows.shim.win, sync, bytes, buffers,
                          batch_ms),
            "fraction");
      }
      add("target overlap", Sync::kPscw, bytes,
          TargetOverlap(pair, windows.native.win, bytes, buffers, batch_ms),
          TargetOverlap(pair, windows.shim.win, bytes, buffers, batch_ms),
          "fraction");
    }
    if (Rank(pair) == kOrigin) table.Print(flags.csv);
    MPI_Comm_free(&pair);
  }
  const int rc = verifier.Finish();
  MPI_Finalize();
  return rc;
}
