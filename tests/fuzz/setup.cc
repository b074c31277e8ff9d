// What a run of rma_fuzz stands on (executor.h): the watchdog that names
// the step a hang is in, the layout of MPI_COMM_WORLD's ranks on nodes,
// and the program's windows, opened as their specs say.
#include <mpi.h>
#include <signal.h>
#include <unistd.h>
#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>
#include "tests/fuzz/executor.h"

namespace rma_fuzz {
namespace run {

// ---- Watchdog: a hang becomes a message naming the step, then exit 124.

char g_step[256] = "MPI_Init";
int g_rank = 0;
int g_timeout = 100;

void SetStep(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void SetStep(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_step, sizeof g_step, fmt, ap);
  va_end(ap);
}

void OnAlarm(int) {
  char msg[400];
  const int len = snprintf(
      msg, sizeof msg, "[rank %d] rma_fuzz watchdog: stuck for %d s in %s\n",
      g_rank, g_timeout, g_step);
  if (len > 0) {
    ssize_t ignored = write(2, msg, std::min<size_t>(len, sizeof msg - 1));
    (void)ignored;
  }
  _exit(124);
}

// Any error on a valid program is a finding: name the call and stop.
void Check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  int cls = 0, len = 0;
  char text[MPI_MAX_ERROR_STRING];
  MPI_Error_class(rc, &cls);
  MPI_Error_string(rc, text, &len);
  std::fprintf(stderr, "[rank %d] %s failed in %s: class %d: %s\n", g_rank,
               call, g_step, cls, text);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
}

// ---- Layout and windows.

Layout LearnLayout() {
  Layout l;
  int rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &l.size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                      &node);
  int leader = rank;
  MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  std::vector<int> leaders(l.size);
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT,
                MPI_COMM_WORLD);
  std::vector<int> distinct = leaders;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  l.nodes = static_cast<int>(distinct.size());
  for (int r = 0; r < l.size; ++r) {
    l.node_of.push_back(static_cast<int>(
        std::lower_bound(distinct.begin(), distinct.end(), leaders[r]) -
        distinct.begin()));
  }
  return l;
}

WindowRt OpenWindow(const Program& prog, int w, int me) {
  const WindowSpec& spec = prog.windows[w];
  WindowRt rt;
  SetStep("creating window w%d", w);
  const int size = prog.layout.size;
  switch (spec.comm) {
    case CommKind::kWorld:
      MPI_Comm_dup(MPI_COMM_WORLD, &rt.comm);
      break;
    case CommKind::kWorldReversed:
      MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - me, &rt.comm);
      break;
    case CommKind::kNode:
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me,
                          MPI_INFO_NULL, &rt.comm);
      break;
    case CommKind::kNodeReversed:
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - 1 - me,
                          MPI_INFO_NULL, &rt.comm);
      break;
  }
  MPI_Comm_rank(rt.comm, &rt.rank);
  bool found = false;
  for (size_t g = 0; g < spec.groups.size(); ++g) {
    const std::vector<int>& group = spec.groups[g];
    for (size_t i = 0; i < group.size(); ++i) {
      if (group[i] != me) continue;
      found = static_cast<int>(i) == rt.rank;
      rt.g = static_cast<int>(g);
    }
  }
  if (!found) {
    std::fprintf(stderr,
                 "[rank %d] window w%d: communicator order differs "
                 "from the program's\n",
                 me, w);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  rt.bytes = spec.bytes[me];
  const int du = spec.disp_unit[me];
  MPI_Info info = MPI_INFO_NULL;
  if (spec.noncontig) {
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
  }
  switch (spec.flavor) {
    case Flavor::kAllocate:
      Check(MPI_Win_allocate(rt.bytes, du, info, rt.comm, &rt.base, &rt.win),
            "MPI_Win_allocate");
      break;
    case Flavor::kShared:
      Check(MPI_Win_allocate_shared(rt.bytes, du, info, rt.comm, &rt.base,
                                    &rt.win),
            "MPI_Win_allocate_shared");
      break;
    case Flavor::kCreate:
      rt.base = rt.AllocateOwn();
      Check(MPI_Win_create(rt.base, rt.bytes, du, info, rt.comm, &rt.win),
            "MPI_Win_create");
      break;
    case Flavor::kDynamic: {
      rt.base = rt.AllocateOwn();
      Check(MPI_Win_create_dynamic(info, rt.comm, &rt.win),
            "MPI_Win_create_dynamic");
      if (rt.bytes > 0) {
        Check(MPI_Win_attach(rt.win, rt.base, rt.bytes), "MPI_Win_attach");
      }
      MPI_Aint mine;
      MPI_Get_address(rt.base, &mine);
      int n;
      MPI_Comm_size(rt.comm, &n);
      rt.attached.resize(n);
      MPI_Allgather(&mine, 1, MPI_AINT, rt.attached.data(), 1, MPI_AINT,
                    rt.comm);
      break;
    }
  }
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  MPI_Win_set_errhandler(rt.win, MPI_ERRORS_RETURN);
  MPI_Win_get_group(rt.win, &rt.group);
  InitMemory(prog, w, me, rt.base);
  // A synchronization after the initial stores, so later epochs may assert
  // MPI_MODE_NOSTORE.
  // Locks with and without NOCHECK never meet on one window (MPICH bug,
  // see generate.cc).
  const int nocheck = spec.nocheck_locks ? MPI_MODE_NOCHECK : 0;
  Check(MPI_Win_lock_all(nocheck, rt.win), "MPI_Win_lock_all");
  Check(MPI_Win_sync(rt.win), "MPI_Win_sync");
  Check(MPI_Win_unlock_all(rt.win), "MPI_Win_unlock_all");
  return rt;
}

}  // namespace run
}  // namespace rma_fuzz
