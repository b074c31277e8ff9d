// MPICH's ch4:ucx waits by polling UCX: every blocking MPI call, and every
// collective MPICH runs inside window creation, free and fence, loops over
// ucp_worker_progress until what it waits for arrives, and never yields
// the core. On a host with more ranks than cores such a wait keeps the
// peer it waits for off the core for the rest of the kernel's time slice,
// so each step of a collective costs a slice (docs/benchmarks.md
// "Oversubscribed hosts" has what that makes of window creation). The
// shim's wrappers of the blocking calls yield in their own loops
// (shim/agent/stand_in_wait.h), but MPICH's internal waits call no MPI
// function the shim could wrap; they do call this one, through libucp's
// dynamic symbol, so the shim (preloaded, hence first in the lookup order)
// interposes it, and so does libdart.so, which the program links before
// MPICH: the real poll, then NoteMpiProgressPoll (spin_wait.h), which
// yields only on an oversubscribed host after a run of idle polls. The
// shim's own calls (its agent's worker, shim/agent/ucx_transport.cc) bind
// here too and follow the same rule. Another MPI (ch4:ofi, ch3) never
// calls it: nothing changes there.
#include <dlfcn.h>
#include <ucp/api/ucp.h>

#include <cstdio>
#include <cstdlib>

#include "shim/base/spin_wait.h"

namespace rmashim {
namespace {

using ProgressFn = unsigned (*)(ucp_worker_h);

// libucp's own ucp_worker_progress: the next definition after this
// library's. The shim links libucp, so there is one.
ProgressFn RealProgress() {
  static const ProgressFn real = [] {
    void* found = dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (found == nullptr) {
      std::fprintf(stderr,
                   "rmashim: ucp_worker_progress not found in libucp\n");
      std::abort();
    }
    return reinterpret_cast<ProgressFn>(found);
  }();
  return real;
}

}  // namespace
}  // namespace rmashim

extern "C" unsigned ucp_worker_progress(ucp_worker_h worker) {
  const unsigned progressed = rmashim::RealProgress()(worker);
  rmashim::NoteMpiProgressPoll(progressed != 0);
  return progressed;
}
