// The DART papers' measurement, as ratios in one run: blocking put/get
// completion time (DTCT) and non-blocking put/get initiation time (DTIT),
// 1 B to 2 MiB, for DART, the raw rmashim core path DART is built on, and
// native MPICH, from unit 0 to unit 1.
//
//   mpirun -n 2 dart_bench                                  # node-local
//   mpirun -n 2 env MPIR_CVAR_ODD_EVEN_CLIQUES=1 dart_bench # remote (split)
//
// Run without librmashim.so preloaded: the native column is plain MPICH.
// Columns: time per operation (us, fastest batch) and DART's overhead over the
// core path in ns (the goal: at most 10 ns for a node-local blocking put).
#include <dart/dart.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "shim/access.h"
#include "shim/datatype.h"
#include "shim/window.h"

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
  double dart, core, native;
};

Timing Measure(const std::function<void()>& dart,
               const std::function<void()>& core,
               const std::function<void()>& native,
               const std::function<void()>& complete, int max_iters) {
  constexpr int kBatches = 15;
  constexpr double kBatchUs = 2000;  // ~2 ms per batch
  const std::function<void()>* ops[3] = {&dart, &core, &native};
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

// What rmashim's put/get wrapper does on a managed window once it has found
// it: layouts, argument and range checks, then a copy into the mapped
// target, or MPI for a remote one; flush is a fence, or MPI's flush.
class CorePath {
 public:
  explicit CorePath(rmashim::ManagedWindow* w) : w_(w) {
    if (w_->internal_win() == MPI_WIN_NULL) {
      PMPI_Win_lock_all(MPI_MODE_NOCHECK, w_->app_win());
    }
  }
  ~CorePath() {
    if (w_->internal_win() == MPI_WIN_NULL) PMPI_Win_unlock_all(w_->app_win());
    delete w_;
  }
  int Put(const void* buf, int count, int target, MPI_Aint disp) {
    return Move(true, const_cast<void*>(buf), count, target, disp);
  }
  int Get(void* buf, int count, int target, MPI_Aint disp) {
    return Move(false, buf, count, target, disp);
  }
  void Flush(int target) {
    if (w_->target(target).node_local()) {
      std::atomic_thread_fence(std::memory_order_seq_cst);
    } else {
      PMPI_Win_flush(target, w_->app_win());
    }
  }
  bool node_local(int target) const { return w_->target(target).node_local(); }

 private:
  int Move(bool put, void* buf, int count, int target, MPI_Aint disp) {
    rmashim::Layout ol, tl;
    if (!rmashim::DescribeBuiltin(count, MPI_BYTE, &ol) ||
        !rmashim::DescribeBuiltin(count, MPI_BYTE, &tl)) {
      return MPI_ERR_TYPE;
    }
    if (int rc = rmashim::CheckTargetArgs(*w_, target, disp)) return rc;
    const rmashim::Target& t = w_->target(target);
    MPI_Aint offset = 0;
    if (!rmashim::FitsInTarget(t, disp, tl, &offset)) return MPI_ERR_RMA_RANGE;
    if (t.node_local()) {
      return put ? rmashim::CopyTyped(buf, count, MPI_BYTE, ol, t.base + offset,
                                      count, MPI_BYTE, tl)
                 : rmashim::CopyTyped(t.base + offset, count, MPI_BYTE, tl, buf,
                                      count, MPI_BYTE, ol);
    }
    return put ? PMPI_Put(buf, count, MPI_BYTE, target, disp, count, MPI_BYTE,
                          w_->app_win())
               : PMPI_Get(buf, count, MPI_BYTE, target, disp, count, MPI_BYTE,
                          w_->app_win());
  }
  rmashim::ManagedWindow* w_;
};

void PrintRow(size_t bytes, const Timing& t) {
  std::printf("| %7zu | %9.3f | %9.3f | %9.3f | %+8.1f | %8.2f |\n", bytes,
              t.dart, t.core, t.native, (t.dart - t.core) * 1e3,
              t.native / t.dart);
}

void Run(int me, size_t units) {
  // The same amount of memory three ways.
  dart_gptr_t seg;
  dart_team_memalloc_aligned(DART_TEAM_ALL, kMaxBytes, DART_TYPE_BYTE, &seg);
  dart_gptr_t target = seg;
  dart_gptr_setunit(&target, DART_TEAM_UNIT_ID(kTarget));
  rmashim::ManagedWindow* w = nullptr;
  void* core_base = nullptr;
  rmashim::ManagedWindow::Allocate(kMaxBytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                                   &core_base, &w);
  CorePath core(w);
  MPI_Win native;
  void* native_base = nullptr;
  MPI_Win_allocate(kMaxBytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &native_base,
                   &native);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, native);
  // Touch every target page once.
  void* mine = nullptr;
  dart_gptr_t self = seg;
  dart_gptr_setunit(&self, DART_TEAM_UNIT_ID(me));
  dart_gptr_getaddr(self, &mine);
  std::memset(mine, 1, kMaxBytes);
  std::memset(core_base, 1, kMaxBytes);
  std::memset(native_base, 1, kMaxBytes);
  MPI_Barrier(MPI_COMM_WORLD);

  if (me == 0) {
    std::vector<char> buf(kMaxBytes, 2);
    const bool local = core.node_local(kTarget);
    std::printf(
        "DART vs rmashim core vs native MPICH, unit 0 -> unit 1 (%s), %zu "
        "units\n",
        local ? "node-local" : "remote", units);
    const char* header =
        "|   bytes |  DART us  |  core us  | native us | DART-core ns | "
        "native/DART |\n"
        "|--------:|----------:|----------:|----------:|---------:|-------"
        "--:|\n";
    struct Metric {
      const char* name;
      bool put, blocking;
    } metrics[] = {{"blocking put, completion time (DTCT)", true, true},
                   {"blocking get, completion time (DTCT)", false, true},
                   {"non-blocking put, initiation time (DTIT)", true, false},
                   {"non-blocking get, initiation time (DTIT)", false, false}};
    // Warm every path up (connections, registrations) before measuring.
    for (int i = 0; i < 500; ++i) {
      dart_put_blocking(target, buf.data(), 8, DART_TYPE_BYTE, DART_TYPE_BYTE);
      dart_get_blocking(buf.data(), target, 8, DART_TYPE_BYTE, DART_TYPE_BYTE);
      core.Put(buf.data(), 8, kTarget, 0);
      core.Get(buf.data(), 8, kTarget, 0);
      core.Flush(kTarget);
      MPI_Put(buf.data(), 8, MPI_BYTE, kTarget, 0, 8, MPI_BYTE, native);
      MPI_Get(buf.data(), 8, MPI_BYTE, kTarget, 0, 8, MPI_BYTE, native);
      MPI_Win_flush(kTarget, native);
    }
    for (const Metric& m : metrics) {
      std::printf("\n%s\n%s", m.name, header);
      for (size_t bytes = 1; bytes <= kMaxBytes; bytes *= 2) {
        const int n = static_cast<int>(bytes);
        char* b = buf.data();
        std::function<void()> d, c, x, complete;
        if (m.blocking) {
          d = m.put ? std::function<void()>([&] {
            dart_put_blocking(target, b, bytes, DART_TYPE_BYTE, DART_TYPE_BYTE);
          })
                    : [&] {
                        dart_get_blocking(b, target, bytes, DART_TYPE_BYTE,
                                          DART_TYPE_BYTE);
                      };
          c = m.put ? std::function<void()>([&] {
            core.Put(b, n, kTarget, 0);
            core.Flush(kTarget);
          })
                    : [&] {
                        core.Get(b, n, kTarget, 0);
                        core.Flush(kTarget);
                      };
          x = m.put
                  ? std::function<void()>([&] {
                      MPI_Put(b, n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, native);
                      MPI_Win_flush(kTarget, native);
                    })
                  : [&] {
                      MPI_Get(b, n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, native);
                      MPI_Win_flush(kTarget, native);
                    };
          complete = [] {};
        } else {
          d = m.put ? std::function<void()>([&] {
            dart_put(target, b, bytes, DART_TYPE_BYTE, DART_TYPE_BYTE);
          })
                    : [&] {
                        dart_get(b, target, bytes, DART_TYPE_BYTE,
                                 DART_TYPE_BYTE);
                      };
          c = m.put ? std::function<void()>([&] { core.Put(b, n, kTarget, 0); })
                    : [&] { core.Get(b, n, kTarget, 0); };
          x = m.put
                  ? std::function<void()>([&] {
                      MPI_Put(b, n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, native);
                    })
                  : [&] {
                      MPI_Get(b, n, MPI_BYTE, kTarget, 0, n, MPI_BYTE, native);
                    };
          complete = [&] {
            dart_flush(target);
            core.Flush(kTarget);
            MPI_Win_flush(kTarget, native);
          };
        }
        // Non-blocking MPI operations queue up until the flush: keep the
        // batches short for them.
        PrintRow(bytes, Measure(d, c, x, complete, m.blocking ? 20000 : 200));
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_unlock_all(native);
  MPI_Win_free(&native);
  dart_team_memfree(seg);
}  // the core window is freed here, collectively

}  // namespace

int main(int argc, char** argv) {
  if (dart_init(&argc, &argv) != DART_OK) return 1;
  dart_global_unit_t me;
  size_t units = 0;
  dart_myid(&me);
  dart_size(&units);
  if (units < 2) {
    if (me.id == 0) std::fprintf(stderr, "run with at least 2 units\n");
  } else {
    Run(me.id, units);
  }
  return dart_exit() == DART_OK && units >= 2 ? 0 : 1;
}
