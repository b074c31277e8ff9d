// OSU-style measurements between an origin and a target rank: the five
// synchronization modes, the RMA operations, their CPU floors, and checks
// that each (operation, mode) moves the right data. Used by osu_rma and numa.
#ifndef RMASHIM_BENCH_PAIR_RMA_H_
#define RMASHIM_BENCH_PAIR_RMA_H_

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_util.h"

namespace rmashim_bench {

// Ranks of the pair communicator.
constexpr int kOrigin = 0;
constexpr int kTarget = 1;

enum class Sync { kFlush, kLock, kLockAll, kFence, kPscw };
enum class Op { kPut, kGet, kAccumulate, kFetchAndOp, kCompareAndSwap };

constexpr Sync kAllSyncs[] = {Sync::kFlush, Sync::kLock, Sync::kLockAll,
                              Sync::kFence, Sync::kPscw};

inline const char* Name(Sync sync) {
  switch (sync) {
    case Sync::kFlush:
      return "flush";
    case Sync::kLock:
      return "lock";
    case Sync::kLockAll:
      return "lock_all";
    case Sync::kFence:
      return "fence";
    case Sync::kPscw:
      return "pscw";
  }
  return "?";
}

inline const char* Name(Op op) {
  switch (op) {
    case Op::kPut:
      return "put";
    case Op::kGet:
      return "get";
    case Op::kAccumulate:
      return "acc";
    case Op::kFetchAndOp:
      return "fetch_and_op";
    case Op::kCompareAndSwap:
      return "cas";
  }
  return "?";
}

inline bool IsPassive(Sync sync) {
  return sync == Sync::kFlush || sync == Sync::kLock || sync == Sync::kLockAll;
}

// Ranks 0 and 1 of the world as a communicator of their own (the pair's
// windows and collectives leave other ranks alone); MPI_COMM_NULL elsewhere.
inline MPI_Comm PairComm() {
  MPI_Comm pair;
  MPI_Comm_split(MPI_COMM_WORLD, Rank() < 2 ? 0 : MPI_UNDEFINED, Rank(), &pair);
  return pair;
}

// One synchronization mode seen from both sides of the pair. Each
// Open()/Close() is one access epoch of the origin to the target; the target
// exposes its window in the active modes and makes no call at all in the
// passive ones. The object's lifetime brackets the mode's outer calls
// (lock_all for flush, the first and last fence).
class Epochs {
 public:
  Epochs(MPI_Win win, Sync sync, bool origin)
      : win_(win), sync_(sync), origin_(origin) {
    int peer = origin ? kTarget : kOrigin;
    MPI_Group all;
    MPI_Win_get_group(win, &all);
    MPI_Group_incl(all, 1, &peer, &peer_);
    MPI_Group_free(&all);
    if (sync_ == Sync::kFlush && origin_) MPI_Win_lock_all(0, win_);
    if (sync_ == Sync::kFence) MPI_Win_fence(MPI_MODE_NOPRECEDE, win_);
  }
  ~Epochs() {
    if (sync_ == Sync::kFlush && origin_) MPI_Win_unlock_all(win_);
    if (sync_ == Sync::kFence) MPI_Win_fence(MPI_MODE_NOSUCCEED, win_);
    MPI_Group_free(&peer_);
  }
  Epochs(const Epochs&) = delete;
  Epochs& operator=(const Epochs&) = delete;

  void Open() {
    switch (sync_) {
      case Sync::kLock:
        if (origin_) MPI_Win_lock(MPI_LOCK_SHARED, kTarget, 0, win_);
        break;
      case Sync::kLockAll:
        if (origin_) MPI_Win_lock_all(0, win_);
        break;
      case Sync::kPscw:
        if (origin_) {
          MPI_Win_start(peer_, 0, win_);
        } else {
          MPI_Win_post(peer_, 0, win_);
        }
        break;
      case Sync::kFlush:
      case Sync::kFence:
        break;
    }
  }

  void Close() {
    switch (sync_) {
      case Sync::kFlush:
        if (origin_) MPI_Win_flush(kTarget, win_);
        break;
      case Sync::kLock:
        if (origin_) MPI_Win_unlock(kTarget, win_);
        break;
      case Sync::kLockAll:
        if (origin_) MPI_Win_unlock_all(win_);
        break;
      case Sync::kFence:
        MPI_Win_fence(0, win_);
        break;
      case Sync::kPscw:
        if (origin_) {
          MPI_Win_complete(win_);
        } else {
          MPI_Win_wait(win_);
        }
        break;
    }
  }

  // One epoch: the origin runs `ops` inside it, the target only synchronizes.
  template <typename Ops>
  void Run(Ops ops) {
    Open();
    if (origin_) ops();
    Close();
  }

 private:
  MPI_Win win_;
  Sync sync_;
  bool origin_;
  MPI_Group peer_;
};

// The origin's buffers; `per_epoch` operations may be in flight at once.
struct OpBuffers {
  explicit OpBuffers(size_t max_bytes, int max_per_epoch)
      : src(max_bytes), dst(max_bytes), results(max_per_epoch) {
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 13);
  }
  std::vector<char> src, dst;
  std::vector<uint64_t> results;  // fetch_and_op / cas results, one per op
  const uint64_t one = 1, zero = 0;
};

// Issues the `k`-th operation of an epoch (atomics keep their own result
// slot: results may not be touched before the epoch completes).
inline void Issue(Op op, MPI_Win win, size_t bytes, OpBuffers& b, int k) {
  const int n = static_cast<int>(bytes);
  switch (op) {
    case Op::kPut:
      MPI_Put(b.src.data(), n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, win);
      break;
    case Op::kGet:
      MPI_Get(b.dst.data(), n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, win);
      break;
    case Op::kAccumulate:
      MPI_Accumulate(b.src.data(), n / 8, MPI_DOUBLE, kTarget, 0, n / 8,
                     MPI_DOUBLE, MPI_SUM, win);
      break;
    case Op::kFetchAndOp:
      MPI_Fetch_and_op(&b.one, &b.results[k], MPI_UINT64_T, kTarget, 0, MPI_SUM,
                       win);
      break;
    case Op::kCompareAndSwap:  // compares equal: a successful swap each time
      MPI_Compare_and_swap(&b.zero, &b.zero, &b.results[k], MPI_UINT64_T,
                           kTarget, 0, win);
      break;
  }
}

// Microseconds per operation, `per_epoch` operations per epoch, measured by
// both ranks of `pair` (the origin's time). With `compute_us`, the origin
// computes that long after issuing an epoch's operations and before
// completing them (the overlap test).
inline double MeasureOp(MPI_Comm pair, MPI_Win win, Sync sync, Op op,
                        size_t bytes, int per_epoch, OpBuffers& b,
                        double batch_ms, double compute_us = 0) {
  Epochs epochs(win, sync, Rank(pair) == kOrigin);
  const double us = TimeOnAll(
      pair, batch_ms,
      [&] {
        epochs.Run([&] {
          for (int k = 0; k < per_epoch; ++k) Issue(op, win, bytes, b, k);
          if (compute_us > 0) Busy(compute_us);
        });
      },
      kOrigin);
  return us / per_epoch;
}

// The process-skew test of the truly one-sided paper: the target (rank 1 of
// `comm`) computes `compute_us` inside its exposure epoch (PSCW: between
// post and wait; passive modes: outside MPI altogether) while the origin
// (rank 0) times one epoch of 16 puts of `bytes` to consecutive slots of
// `src`'s size. Other ranks only join the barriers. Mean over `reps`, in
// microseconds, on every rank.
inline double SkewUs(MPI_Comm comm, MPI_Win win, Sync sync, const char* src,
                     size_t bytes, double compute_us, int reps) {
  constexpr int kPuts = 16;
  const int me = Rank(comm);
  const int n = static_cast<int>(bytes);
  std::optional<Epochs> epochs;
  if (me <= kTarget) epochs.emplace(win, sync, me == kOrigin);
  double total = 0;
  for (int rep = 0; rep < reps; ++rep) {
    MPI_Barrier(comm);
    if (me == kTarget) epochs->Open();
    MPI_Barrier(comm);  // the target has posted
    if (me == kTarget) {
      Busy(compute_us);
      epochs->Close();
    } else if (me == kOrigin) {
      const double t0 = MPI_Wtime();
      epochs->Run([&] {
        for (int k = 0; k < kPuts; ++k) {
          MPI_Put(src, n, MPI_BYTE, kTarget, k * bytes, n, MPI_BYTE, win);
        }
      });
      total += MPI_Wtime() - t0;
    }
  }
  epochs.reset();
  double us = total * 1e6 / reps;
  MPI_Bcast(&us, 1, MPI_DOUBLE, kOrigin, comm);
  return us;
}

// The same work done by the CPU on the target's mapped memory, followed by
// a memory fence (what a flush must at least cost); origin only.
inline double FloorUs(Op op, char* peer, size_t bytes, OpBuffers& b,
                      double batch_ms) {
  auto fence = [] { std::atomic_thread_fence(std::memory_order_seq_cst); };
  auto* word = reinterpret_cast<uint64_t*>(peer);
  auto timed = [&](auto body) { return TimeLocal(batch_ms, body); };
  switch (op) {
    case Op::kPut:
      return timed([&] { FloorCopy(peer, b.src.data(), bytes), fence(); });
    case Op::kGet:
      return timed([&] { FloorCopy(b.dst.data(), peer, bytes), fence(); });
    case Op::kAccumulate:
      return timed([&] {
        auto* target = reinterpret_cast<double*>(peer);
        const auto* src = reinterpret_cast<const double*>(b.src.data());
        for (size_t i = 0; i < bytes / 8; ++i) target[i] += src[i];
        fence();
      });
    case Op::kFetchAndOp:
      return timed([&] { b.results[0] = std::atomic_ref(*word).fetch_add(1); });
    case Op::kCompareAndSwap:
      return timed([&] {
        uint64_t expected = 0;
        std::atomic_ref(*word).compare_exchange_strong(expected, 0);
        b.results[0] = expected;
      });
  }
  return 0;
}

// Checks that `op` under `sync` moves the right data through `win` (`base`
// is this rank's window memory): what the origin writes is read back through
// the window and found in the target's own memory; what the target stores
// locally, the origin reads; atomics return the values in order.
inline void VerifyOp(MPI_Comm pair, MPI_Win win, char* base, Sync sync, Op op,
                     size_t bytes, Verifier& v, const std::string& label) {
  const bool origin = Rank(pair) == kOrigin;
  const std::string what = label + " " + Name(op) + "/" + Name(sync) + " " +
                           std::to_string(bytes) + " B: ";
  const int n = static_cast<int>(bytes);
  std::vector<char> pattern(bytes), got(bytes);
  for (size_t i = 0; i < bytes; ++i) {
    pattern[i] = static_cast<char>(i * 7 + bytes + static_cast<int>(sync) * 31);
  }
  // The target's own memory, outside any epoch (after MPI_Barrier).
  auto target_memory = [&](auto fn) {
    MPI_Barrier(pair);
    if (!origin) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, kTarget, 0, win);
      fn();
      MPI_Win_unlock(kTarget, win);
    }
    MPI_Barrier(pair);
  };
  uint64_t results[6] = {};
  switch (op) {
    case Op::kPut: {
      {
        Epochs epochs(win, sync, origin);
        epochs.Run([&] {
          MPI_Put(pattern.data(), n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, win);
        });
        epochs.Run([&] {
          MPI_Get(got.data(), n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, win);
        });
      }
      if (origin) v.Expect(got == pattern, what + "get after put differs");
      target_memory([&] {
        v.Expect(std::memcmp(base, pattern.data(), bytes) == 0,
                 what + "target memory differs from the put");
      });
      break;
    }
    case Op::kGet: {
      std::reverse(pattern.begin(), pattern.end());
      target_memory([&] { std::memcpy(base, pattern.data(), bytes); });
      {
        Epochs epochs(win, sync, origin);
        epochs.Run([&] {
          MPI_Get(got.data(), n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, win);
        });
      }
      if (origin)
        v.Expect(got == pattern, what + "get differs from target memory");
      break;
    }
    case Op::kAccumulate: {
      const size_t count = bytes / 8;
      std::vector<double> ones(count, 1.0), sums(count, 0.0);
      target_memory([&] { std::memset(base, 0, count * 8); });
      {
        Epochs epochs(win, sync, origin);
        epochs.Run([&] {
          for (int k = 0; k < 3; ++k) {
            MPI_Accumulate(ones.data(), n / 8, MPI_DOUBLE, kTarget, 0, n / 8,
                           MPI_DOUBLE, MPI_SUM, win);
          }
        });
        epochs.Run([&] {
          MPI_Get(sums.data(), n / 8, MPI_DOUBLE, kTarget, 0, n / 8, MPI_DOUBLE,
                  win);
        });
      }
      if (origin) {
        v.Expect(std::all_of(sums.begin(), sums.end(),
                             [](double x) { return x == 3.0; }),
                 what + "three accumulates of 1.0 did not sum to 3.0");
      }
      target_memory([&] {
        const auto* t = reinterpret_cast<const double*>(base);
        v.Expect(std::all_of(t, t + count, [](double x) { return x == 3.0; }),
                 what + "target memory is not 3.0 after the accumulates");
      });
      break;
    }
    case Op::kFetchAndOp:
    case Op::kCompareAndSwap: {
      const bool fop = op == Op::kFetchAndOp;
      uint64_t compare[5], swap[5];
      for (uint64_t k = 0; k < 5; ++k) compare[k] = k, swap[k] = k + 1;
      const uint64_t one = 1, wrong = 99, seven = 7;
      target_memory([&] { std::memset(base, 0, 8); });
      {
        Epochs epochs(win, sync, origin);
        epochs.Run([&] {  // accumulate ordering keeps the five in order
          for (int k = 0; k < 5; ++k) {
            if (fop) {
              MPI_Fetch_and_op(&one, &results[k], MPI_UINT64_T, kTarget, 0,
                               MPI_SUM, win);
            } else {
              MPI_Compare_and_swap(&swap[k], &compare[k], &results[k],
                                   MPI_UINT64_T, kTarget, 0, win);
            }
          }
        });
        epochs.Run([&] {  // a no-op read, or a swap that must fail
          if (fop) {
            MPI_Fetch_and_op(nullptr, &results[5], MPI_UINT64_T, kTarget, 0,
                             MPI_NO_OP, win);
          } else {
            MPI_Compare_and_swap(&seven, &wrong, &results[5], MPI_UINT64_T,
                                 kTarget, 0, win);
          }
        });
      }
      if (origin) {
        bool ok = true;
        for (uint64_t k = 0; k < 6; ++k) ok = ok && results[k] == k;
        v.Expect(ok, what + "results are not 0,1,2,3,4,5");
      }
      target_memory([&] {
        v.Expect(*reinterpret_cast<const uint64_t*>(base) == 5,
                 what + "target word is not 5");
      });
      break;
    }
  }
}

// The whole of a two-rank table benchmark (rma_atomics, rma_latency): MPI
// started, the flags checked before anything is measured, a native and a
// managed window of `bytes` on every rank; rank 0 runs `measure(native,
// shim, peer)`, `peer` being kTarget's memory as mapped here, and prints
// its rows (PrintRows).
template <typename Measure>
int RunNativeVsShimTable(int argc, char** argv, MPI_Aint bytes,
                         Measure measure) {
  MPI_Init(&argc, &argv);
  const bool csv = ParseFlags(argc, argv).csv;
  RequireRanks(2);
  char* base = nullptr;
  MPI_Win native = AllocateWindow(false, bytes, &base);
  MPI_Win shim = AllocateWindow(true, bytes, &base);
  WarnIfNotPreloaded(shim);
  char* peer = MappedPeer(shim, kTarget);
  std::vector<Row> rows;
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() == 0) rows = measure(native, shim, peer);
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() == 0) PrintRows(rows, csv);
  MPI_Win_free(&shim);
  MPI_Win_free(&native);
  MPI_Finalize();
  return 0;
}

}  // namespace rmashim_bench

#endif  // RMASHIM_BENCH_PAIR_RMA_H_
