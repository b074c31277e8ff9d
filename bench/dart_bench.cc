// The DART papers' measurement, as ratios in one run: blocking put/get
// completion time (DTCT) and non-blocking put/get initiation time (DTIT),
// 1 B to 2 MiB, for DART, the shim's own MPI_Put/MPI_Get path on a managed
// window (what DART is measured against: the raw shim) and native MPICH (an
// opted-out window), from unit 0 to unit 1.
//
//   mpirun -n 2 env LD_PRELOAD=librmashim.so dart_bench [--quick]
//   mpirun -n 2 env LD_PRELOAD=librmashim.so MPIR_CVAR_ODD_EVEN_CLIQUES=1
//       dart_bench                                      # remote (split)
//
// Needs the shim preloaded (else there is no shim column: it says so and
// stops). Columns: time per operation (us, fastest batch) and DART's
// overhead over the shim in ns (the goal: at most 10 ns for a node-local
// blocking put). Ends by checking that all three paths moved the right data.
#include <dart/dart.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_util.h"

namespace {

constexpr size_t kMaxBytes = size_t{2} << 20;
constexpr int kTarget = 1;

double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The mean time of one op in the fastest of several batches; the three
// implementations' batches are interleaved (in rotating order) so machine
// noise hits all alike.
struct Timing {
  double dart, shim, native;
};

Timing Measure(const rmashim_bench::Flags& flags,
               const std::function<void()>& dart,
               const std::function<void()>& shim,
               const std::function<void()>& native,
               const std::function<void()>& complete, int max_iters) {
  const int kBatches = flags.quick ? 3 : 15;
  const double kBatchUs = flags.quick ? 200 : 2000;
  const std::function<void()>* ops[3] = {&dart, &shim, &native};
  // Warm-up, and the batch length that keeps the slowest one near kBatchUs.
  double slowest = 0;
  for (int k = 0; k < 3; ++k) {
    const double t0 = NowUs();
    for (int i = 0; i < 5; ++i) (*ops[k])();
    slowest = std::max(slowest, (NowUs() - t0) / 5);
    complete();
  }
  const int iters = static_cast<int>(
      std::clamp(kBatchUs / std::max(slowest, 1e-3), 5.0, double(max_iters)));
  std::vector<double> t[3];
  for (int b = 0; b < kBatches; ++b) {
    for (int j = 0; j < 3; ++j) {
      const int k = (j + b) % 3;  // rotate who goes first
      const double t0 = NowUs();
      for (int i = 0; i < iters; ++i) (*ops[k])();
      const double t1 = NowUs();
      complete();  // non-blocking forms complete outside the timing
      t[k].push_back((t1 - t0) / iters);
    }
  }
  // The fastest batch: on a shared machine preemption only ever adds time.
  double best[3];
  for (int k = 0; k < 3; ++k) {
    best[k] = *std::min_element(t[k].begin(), t[k].end());
  }
  return {best[0], best[1], best[2]};
}

// An MPI put or get of `n` bytes to kTarget's displacement 0, flushed when
// `blocking`: the shim column on a managed window, native on an opted-out one.
std::function<void()> MpiOp(bool put, bool blocking, MPI_Win win, char* buf,
                            int n) {
  if (put) {
    return [=] {
      MPI_Put(buf, n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, win);
      if (blocking) MPI_Win_flush(kTarget, win);
    };
  }
  return [=] {
    MPI_Get(buf, n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, win);
    if (blocking) MPI_Win_flush(kTarget, win);
  };
}

std::function<void()> DartOp(bool put, bool blocking, dart_gptr_t target,
                             char* buf, size_t n) {
  if (put) {
    return blocking ? std::function<void()>([=] {
      dart_put_blocking(target, buf, n, DART_TYPE_BYTE, DART_TYPE_BYTE);
    })
                    : [=] {
                        dart_put(target, buf, n, DART_TYPE_BYTE,
                                 DART_TYPE_BYTE);
                      };
  }
  return blocking ? std::function<void()>([=] {
    dart_get_blocking(buf, target, n, DART_TYPE_BYTE, DART_TYPE_BYTE);
  })
                  : [=] {
                      dart_get(buf, target, n, DART_TYPE_BYTE, DART_TYPE_BYTE);
                    };
}

void PrintRow(size_t bytes, const Timing& t) {
  std::printf("| %7zu | %9.3f | %9.3f | %9.3f | %+12.1f | %11.2f |\n", bytes,
              t.dart, t.shim, t.native, (t.dart - t.shim) * 1e3,
              t.native / t.dart);
}

// Unit 0 writes a pattern through each path and reads it back; unit 1
// finds it in its memory.
void Verify(int me, dart_gptr_t target, void* dart_mine,
            const rmashim_bench::WindowPair& windows,
            rmashim_bench::Verifier& verify) {
  constexpr size_t kBytes = 4096;
  struct Path {
    const char* name;
    MPI_Win win;  // MPI_WIN_NULL: DART
    const char* mine;
  } paths[] = {{"dart", MPI_WIN_NULL, static_cast<const char*>(dart_mine)},
               {"shim", windows.shim.win, windows.shim.base},
               {"native", windows.native.win, windows.native.base}};
  for (size_t p = 0; p < std::size(paths); ++p) {
    std::vector<char> pattern(kBytes), back(kBytes);
    for (size_t i = 0; i < kBytes; ++i) pattern[i] = char(i * 7 + p + 1);
    if (me == 0) {
      if (paths[p].win == MPI_WIN_NULL) {
        DartOp(true, true, target, pattern.data(), kBytes)();
        DartOp(false, true, target, back.data(), kBytes)();
      } else {
        MpiOp(true, true, paths[p].win, pattern.data(), kBytes)();
        MpiOp(false, true, paths[p].win, back.data(), kBytes)();
      }
      verify.Expect(back == pattern, std::string(paths[p].name) + " read back");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == kTarget) {
      if (paths[p].win != MPI_WIN_NULL) MPI_Win_sync(paths[p].win);
      verify.Expect(std::memcmp(paths[p].mine, pattern.data(), kBytes) == 0,
                    std::string(paths[p].name) + " at the target");
    }
  }
}

int Run(int me, size_t units, const rmashim_bench::Flags& flags) {
  rmashim_bench::Verifier verify("dart_bench");
  const size_t max_bytes = flags.quick ? size_t{64} << 10 : kMaxBytes;
  // The same amount of memory three ways.
  dart_gptr_t seg;
  dart_team_memalloc_aligned(DART_TEAM_ALL, kMaxBytes, DART_TYPE_BYTE, &seg);
  dart_gptr_t target = seg;
  dart_gptr_setunit(&target, DART_TEAM_UNIT_ID(kTarget));
  int status = 0;
  {
    rmashim_bench::WindowPair windows(kMaxBytes, MPI_COMM_WORLD);
    if (!rmashim_bench::ShimManages(windows.shim.win)) {
      if (me == 0) {
        std::fprintf(stderr,
                     "dart_bench: preload librmashim.so (LD_PRELOAD): DART is "
                     "measured against the shim's MPI_Put path\n");
      }
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const MPI_Win shim = windows.shim.win, native = windows.native.win;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, shim);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, native);
    // Touch every target page once.
    void* mine = nullptr;
    dart_gptr_t self = seg;
    dart_gptr_setunit(&self, DART_TEAM_UNIT_ID(me));
    dart_gptr_getaddr(self, &mine);
    std::memset(mine, 1, kMaxBytes);
    std::memset(windows.shim.base, 1, kMaxBytes);
    std::memset(windows.native.base, 1, kMaxBytes);
    MPI_Barrier(MPI_COMM_WORLD);

    if (me == 0) {
      std::vector<char> buf(kMaxBytes, 2);
      char* b = buf.data();
      const bool local = rmashim_bench::MappedPeer(shim, kTarget) != nullptr;
      std::printf(
          "DART vs rmashim vs native MPICH, unit 0 -> unit 1 (%s), "
          "%zu units\n",
          local ? "node-local" : "remote", units);
      const char* header =
          "|   bytes |  DART us  |  shim us  | native us | DART-shim ns | "
          "native/DART |\n"
          "|--------:|----------:|----------:|----------:|-------------:|"
          "------------:|\n";
      struct Metric {
        const char* name;
        bool put, blocking;
      } metrics[] = {
          {"blocking put, completion time (DTCT)", true, true},
          {"blocking get, completion time (DTCT)", false, true},
          {"non-blocking put, initiation time (DTIT)", true, false},
          {"non-blocking get, initiation time (DTIT)", false, false}};
      // Warm every path up (connections, registrations) before measuring.
      for (int i = 0; i < 500; ++i) {
        for (bool put : {true, false}) {
          DartOp(put, true, target, b, 8)();
          MpiOp(put, true, shim, b, 8)();
          MpiOp(put, true, native, b, 8)();
        }
      }
      const std::function<void()> complete_all = [&] {
        dart_flush(target);
        MPI_Win_flush(kTarget, shim);
        MPI_Win_flush(kTarget, native);
      };
      for (const Metric& m : metrics) {
        std::printf("\n%s\n%s", m.name, header);
        for (size_t bytes = 1; bytes <= max_bytes; bytes *= 2) {
          const int n = static_cast<int>(bytes);
          // Non-blocking MPI operations queue up until the flush: keep the
          // batches short for them; they complete outside the timing.
          PrintRow(bytes,
                   Measure(flags, DartOp(m.put, m.blocking, target, b, bytes),
                           MpiOp(m.put, m.blocking, shim, b, n),
                           MpiOp(m.put, m.blocking, native, b, n),
                           m.blocking ? [] {} : complete_all,
                           m.blocking ? 20000 : 200));
        }
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    Verify(me, target, mine, windows, verify);
    MPI_Win_unlock_all(native);
    MPI_Win_unlock_all(shim);
  }  // the windows are freed here, collectively
  status = verify.Finish();
  MPI_Barrier(MPI_COMM_WORLD);
  dart_team_memfree(seg);
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (dart_init(&argc, &argv) != DART_OK) return 1;
  dart_global_unit_t me;
  size_t units = 0;
  dart_myid(&me);
  dart_size(&units);
  int status = 1;
  if (units < 2) {
    if (me.id == 0) std::fprintf(stderr, "run with at least 2 units\n");
  } else {
    status = Run(me.id, units, rmashim_bench::ParseFlags(argc, argv));
  }
  return dart_exit() == DART_OK ? status : 1;
}
