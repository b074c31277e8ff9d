// Small operations and window creation against their floors, measured
// interleaved: every round runs one batch of the CPU floor, the shim and
// native MPICH for each case in turn, so all three see the same cache, TLB
// and machine load. Reports the fastest batch of each (load only ever adds
// time; on a shared 2-core machine the median is mostly preemption) and
// shim / floor (a ratio below 1 is flagged: a floor can only be beaten by a
// measurement error). Rank 0 is the origin, rank 1 the target; window allocate
// + free runs on every rank. Without librmashim.so preloaded the shim column is
// native MPICH too and floors are skipped: scripts/bench_sweep.sh runs it
// that way as well to compare a truly native run with the opted-out windows.
// The call floor is the CPU floor plus one call of an empty function per
// MPI call of the pattern (EmptyCall): the part of each row that no
// library reached through calls can avoid, so shim / call floor is what is
// left for the shim's own work.
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_util.h"

namespace {

using namespace rmashim_bench;  // NOLINT

constexpr int kTarget = 1;
constexpr size_t kWindowBytes = size_t{1} << 20;
constexpr MPI_Aint kLockWordOffset = 4096;  // the floor's lock word
constexpr int kBurst = 16;                  // puts per flush (bandwidth)

// One timed batch: `iters` calls of a body, seconds per call.
using Batch = std::function<double(int iters)>;

template <typename Body>
Batch Timed(Body body) {
  return [body](int iters) mutable {
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) body();
    return (MPI_Wtime() - t0) / iters;
  };
}

// A batch inside one lock_all epoch on `win` (opened and closed outside the
// timed loop), or with `lock_all` false in no epoch. `op` is inlined into
// the timed loop, as the floor's body is: the MPI calls are made from the
// loop itself, as an application makes them, with no indirect call of the
// harness's in between (a std::function here cost every MPI row one more
// call per iteration than its floor).
template <typename Op>
Batch InEpoch(MPI_Win win, bool lock_all, Op op) {
  Batch timed = Timed([op, win] { op(win); });
  return [=](int iters) {
    if (lock_all) MPI_Win_lock_all(0, win);
    const double s = timed(iters);
    if (lock_all) MPI_Win_unlock_all(win);
    return s;
  };
}

struct Case {
  std::string name;
  size_t bytes;
  int ops_per_call;           // results are per operation
  Batch floor, shim, native;  // floor empty: none
  // The floor plus as many calls of an empty function as the MPI pattern
  // makes (empty: none).
  Batch call_floor;
};

struct Result {
  double floor_us = 0, shim_us = 0, native_us = 0, call_floor_us = 0;
};

// What calling a library function costs before it does anything: an empty
// function behind a pointer the compiler cannot see through (an indirect
// call, as an application's call of MPI_Put through the PLT is). Any MPI
// library, interposed or not, pays this per call; the call floor adds it to
// the CPU floor so each row shows what is left for the library itself.
[[gnu::noinline]] int EmptyCall(MPI_Win win, int i) {
  asm volatile("" ::"r"(win), "r"(i));
  return 0;
}
int (*volatile g_empty_call)(MPI_Win, int) = EmptyCall;

template <typename Body>
Batch TimedWithCalls(Body body, int calls) {
  return Timed([body, calls]() mutable {
    body();
    for (int k = 0; k < calls; ++k) g_empty_call(MPI_WIN_NULL, k);
  });
}

double Fastest(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}

// Iterations for a batch of about `batch_ms`, from a short probe.
int ItersOf(const Batch& b, double batch_ms) {
  b(4);
  const double s = std::max(b(8), 1e-9);
  return ItersFor(s, batch_ms);
}

std::vector<Result> RunInterleaved(const std::vector<Case>& cases, int rounds,
                                   double batch_ms) {
  const size_t n = cases.size();
  std::vector<std::vector<double>> f(n), s(n), nat(n), cf(n);
  std::vector<int> fi(n), si(n), ni(n), ci(n);
  for (size_t c = 0; c < n; ++c) {
    if (cases[c].floor) fi[c] = ItersOf(cases[c].floor, batch_ms);
    if (cases[c].call_floor) ci[c] = ItersOf(cases[c].call_floor, batch_ms);
    si[c] = ItersOf(cases[c].shim, batch_ms);
    ni[c] = ItersOf(cases[c].native, batch_ms);
  }
  // Odd rounds run the columns in reverse order, so none always follows the
  // previous case's aftermath (e.g. the kernel freeing a 64 MiB window).
  for (int r = 0; r < rounds; ++r) {
    for (size_t c = 0; c < n; ++c) {
      const double per = 1e6 / cases[c].ops_per_call;
      auto floor = [&] {
        if (cases[c].floor) f[c].push_back(cases[c].floor(fi[c]) * per);
        if (cases[c].call_floor) {
          cf[c].push_back(cases[c].call_floor(ci[c]) * per);
        }
      };
      auto native = [&] { nat[c].push_back(cases[c].native(ni[c]) * per); };
      if (r % 2 == 0)
        floor();
      else
        native();
      s[c].push_back(cases[c].shim(si[c]) * per);
      if (r % 2 == 0)
        native();
      else
        floor();
    }
  }
  std::vector<Result> out(n);
  for (size_t c = 0; c < n; ++c) {
    out[c] = {Fastest(f[c]), Fastest(s[c]), Fastest(nat[c]), Fastest(cf[c])};
  }
  return out;
}

// Origin-side cases on rank 0; `peer` is the target's mapped window memory
// (nullptr: no floors). Every MPI case runs inside a lock_all epoch per batch
// except lock+put+unlock.
std::vector<Case> OriginCases(MPI_Win native, MPI_Win shim, char* peer,
                              std::vector<char>& buf, long* result) {
  static const long kOne = 1;
  auto fence = [] { std::atomic_thread_fence(std::memory_order_seq_cst); };
  std::vector<Case> cases;
  // A floor body and the number of MPI calls its pattern makes per
  // iteration (for the call floor).
  struct Floors {
    Batch floor, call_floor;
  };
  auto both = [&](std::string name, size_t bytes, int per_call, auto op,
                  Floors floors, bool lock_all = true) {
    cases.push_back({std::move(name), bytes, per_call, std::move(floors.floor),
                     InEpoch(shim, lock_all, op), InEpoch(native, lock_all, op),
                     std::move(floors.call_floor)});
  };
  auto floor_if = [&](auto body, int calls = 2) {
    return peer ? Floors{Timed(body), TimedWithCalls(body, calls)} : Floors{};
  };
  char* src = buf.data();
  for (size_t bytes : {size_t{8}, size_t{1} << 20}) {
    const int n = static_cast<int>(bytes);
    both(
        "put+flush", bytes, 1,
        [=](MPI_Win w) {
          MPI_Put(src, n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, w);
          MPI_Win_flush(kTarget, w);
        },
        floor_if([=] {
          FloorCopy(peer, src, bytes);
          fence();
        }));
    both(
        "get+flush", bytes, 1,
        [=](MPI_Win w) {
          MPI_Get(src, n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, w);
          MPI_Win_flush(kTarget, w);
        },
        floor_if([=] {
          FloorCopy(src, peer, bytes);
          fence();
        }));
    both(
        "put bandwidth", bytes, kBurst,
        [=](MPI_Win w) {
          for (int k = 0; k < kBurst; ++k) {
            MPI_Put(src, n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, w);
          }
          MPI_Win_flush(kTarget, w);
        },
        floor_if(
            [=] {  // the same pattern: one fence per kBurst copies
              for (int k = 0; k < kBurst; ++k) FloorCopy(peer, src, bytes);
              fence();
            },
            kBurst + 1));
  }
  both(
      "fetch_and_op+flush", 8, 1,
      [=](MPI_Win w) {
        MPI_Fetch_and_op(&kOne, result, MPI_LONG, kTarget, 0, MPI_SUM, w);
        MPI_Win_flush(kTarget, w);
      },
      floor_if([=] {
        *result =
            std::atomic_ref<long>(*reinterpret_cast<long*>(peer)).fetch_add(1);
      }));
  both(
      "compare_and_swap+flush", 8, 1,
      [=](MPI_Win w) {
        const long compare = *result;
        MPI_Compare_and_swap(&kOne, &compare, result, MPI_LONG, kTarget, 0, w);
        MPI_Win_flush(kTarget, w);
      },
      floor_if([=] {
        long expected = *result;
        std::atomic_ref<long>(*reinterpret_cast<long*>(peer))
            .compare_exchange_strong(expected, 1);
        *result = expected;
      }));
  both(
      "accumulate+flush", 8, 1,
      [=](MPI_Win w) {
        MPI_Accumulate(src, 1, MPI_DOUBLE, kTarget, 0, 1, MPI_DOUBLE, MPI_SUM,
                       w);
        MPI_Win_flush(kTarget, w);
      },
      floor_if([=] {
        *reinterpret_cast<double*>(peer) += *reinterpret_cast<double*>(src);
        fence();
      }));
  both(
      "lock+put+unlock", 8, 1,
      [=](MPI_Win w) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, kTarget, 0, w);
        MPI_Put(src, 8, MPI_BYTE, kTarget, 0, 8, MPI_BYTE, w);
        MPI_Win_unlock(kTarget, w);
      },
      Floors{}, /*lock_all=*/false);
  // Its floor: one atomic to take a lock word, the copy, one to release it.
  // The word lies in the window, which the 1 MiB puts overwrite: cleared
  // before each batch.
  if (peer != nullptr) {
    auto* word = reinterpret_cast<uint64_t*>(peer + kLockWordOffset);
    auto body = [=] {
      std::atomic_ref<uint64_t> lock(*word);
      uint64_t expected = 0;
      while (
          !lock.compare_exchange_weak(expected, 1, std::memory_order_acquire)) {
        expected = 0;
      }
      std::memcpy(peer, src, 8);
      lock.fetch_sub(1, std::memory_order_release);
    };
    Batch timed = Timed(body), with_calls = TimedWithCalls(body, 3);
    cases.back().floor = [=](int iters) {
      std::atomic_ref<uint64_t>(*word).store(0);
      return timed(iters);
    };
    cases.back().call_floor = [=](int iters) {
      std::atomic_ref<uint64_t>(*word).store(0);
      return with_calls(iters);
    };
  }
  return cases;
}

// Checks that each window moved the data: a put read back by get, and the
// counter fetch_and_op and compare_and_swap advance.
void Verify(Verifier& v, MPI_Win win, const char* name) {
  std::vector<char> out(64), in(64);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<char>(i * 7 + 3);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, kTarget, 0, win);
  MPI_Put(out.data(), 64, MPI_BYTE, kTarget, 64, 64, MPI_BYTE, win);
  MPI_Win_flush(kTarget, win);
  MPI_Get(in.data(), 64, MPI_BYTE, kTarget, 64, 64, MPI_BYTE, win);
  MPI_Win_flush(kTarget, win);
  v.Expect(in == out, std::string(name) + ": put then get");
  const long start = 40, one = 1, swap = 7;
  long fetched = 0, cas_old = 0;
  MPI_Put(&start, 1, MPI_LONG, kTarget, 16, 1, MPI_LONG, win);
  MPI_Fetch_and_op(&one, &fetched, MPI_LONG, kTarget, 16, MPI_SUM, win);
  MPI_Win_flush(kTarget, win);
  const long expect = start + 1;
  MPI_Compare_and_swap(&swap, &expect, &cas_old, MPI_LONG, kTarget, 16, win);
  MPI_Win_flush(kTarget, win);
  long final_value = 0;
  MPI_Get(&final_value, 1, MPI_LONG, kTarget, 16, 1, MPI_LONG, win);
  MPI_Win_unlock(kTarget, win);
  v.Expect(fetched == start && cas_old == start + 1 && final_value == swap,
           std::string(name) + ": fetch_and_op and compare_and_swap");
}

// Allocate + free of a window of each size on every rank, interleaved
// native / shim per round. Returns {native us, shim us} per size.
std::vector<Case> AllocCases() {
  std::vector<Case> cases;
  for (size_t bytes : {size_t{4} << 10, size_t{1} << 20, size_t{64} << 20}) {
    auto cycle = [bytes](bool managed) {
      return [bytes, managed](int iters) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        for (int i = 0; i < iters; ++i) {
          char* base = nullptr;
          MPI_Win w = AllocateWindow(managed, bytes, &base);
          base[0] = 1;  // memory is usable
          MPI_Win_free(&w);
        }
        double s = (MPI_Wtime() - t0) / iters;
        MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        return s;
      };
    };
    cases.push_back({"win_allocate+free", bytes, 1, Batch(), cycle(true),
                     cycle(false), Batch()});
  }
  return cases;
}

void Print(Table& table, const Case& c, const Result& r) {
  const double shim = r.shim_us, native = r.native_us;
  std::string flag;
  if (r.floor_us > 0 && shim < r.floor_us)
    flag = "shim below floor: measurement error";
  const bool calls = r.call_floor_us > 0;
  table.Add({c.name, std::to_string(c.bytes), Num(native, 4), Num(shim, 4),
             r.floor_us > 0 ? Num(r.floor_us, 4) : "-", Ratio(native, shim),
             r.floor_us > 0 ? Ratio(shim, r.floor_us) : "-",
             calls ? Num(r.call_floor_us, 4) : "-",
             calls ? Ratio(shim, r.call_floor_us) : "-", flag});
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  RequireRanks(2);
  const Flags flags =
      ParseFlags(argc, argv, {{"--ops-only"}, {"--alloc-only"}});
  const int rounds = flags.quick ? 3 : 21;
  const double batch_ms = flags.quick ? 0.5 : 1.0;
  Verifier verifier("small_ops");
  Table table({"test", "bytes", "native_us", "shim_us", "floor_us",
               "native/shim", "shim/floor", "call_floor_us", "shim/call_floor",
               "flag"});
  // --ops-only: skip window creation (profiling the operations);
  // --alloc-only: only window creation (the allocate + free rows).
  const bool ops_only = HasOption(argc, argv, "--ops-only");
  const bool alloc_only = HasOption(argc, argv, "--alloc-only");
  if (!alloc_only) {
    char* base = nullptr;
    MPI_Win native = AllocateWindow(false, kWindowBytes, &base);
    MPI_Win shim = AllocateWindow(true, kWindowBytes, &base);
    WarnIfNotPreloaded(shim);
    char* peer = MappedPeer(shim, kTarget);
    MPI_Barrier(MPI_COMM_WORLD);
    if (Rank() == 0) {
      Verify(verifier, native, "native");
      Verify(verifier, shim, "shim");
      std::vector<char> buf(kWindowBytes, 1);
      long result = 0;
      const std::vector<Case> cases =
          OriginCases(native, shim, peer, buf, &result);
      const std::vector<Result> results =
          RunInterleaved(cases, rounds, batch_ms);
      for (size_t c = 0; c < cases.size(); ++c)
        Print(table, cases[c], results[c]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&shim);
    MPI_Win_free(&native);
  }
  const std::vector<Case> alloc = ops_only ? std::vector<Case>() : AllocCases();
  const std::vector<Result> alloc_results =
      RunInterleaved(alloc, rounds, flags.quick ? 2.0 : 20.0);
  for (size_t c = 0; c < alloc.size(); ++c) {
    if (Rank() == 0) Print(table, alloc[c], alloc_results[c]);
  }
  if (Rank() == 0) table.Print(flags.csv);
  const int rc = verifier.Finish();
  MPI_Finalize();
  return rc;
}
