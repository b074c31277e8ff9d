// Random differential tester for rmashim: generates a random, valid MPI RMA
// program from --seed (the same on every rank), runs it, and prints a
// digest from rank 0 that depends only on what MPI defines: final window
// contents and every deterministic fetched value (tickets as a multiset
// over all ranks). Run natively and under the shim, the digests must be
// byte-identical (tests/fuzz/fuzz_diff.sh).
//
//   rma_fuzz --seed S [--ops N] [--keep-phases 0-3,7] [--drop-ops 5,9-12]
//            [--exclude win_test,fop_pairs] [--print] [--dump]
//            [--count K] [--timeout SECONDS] [--expect-file PATH]
//
// --expect-file: rank 0 writes what a shim run must show in its profile
// (tests/profile/check_engaged.py --fuzz-expect): windows per flavor, and
// how many operations librmashim.so must serve directly (ExpectDirect).
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

#include "tests/fuzz/model.h"
#include "tests/fuzz/program.h"

namespace rma_fuzz {
namespace {

// ---- Options.

struct Options {
  GenOptions gen;
  Filter filter;
  bool print = false;
  bool dump = false;
  bool model = true;  // check the run against the model (--no-model: not)
  int timeout = 100;
  int count = 1;
  std::string expect_file;
};

bool ParseList(const char* s, std::set<int>* out) {
  std::string str(s);
  size_t pos = 0;
  while (pos < str.size()) {
    size_t end = str.find(',', pos);
    if (end == std::string::npos) end = str.size();
    const std::string item = str.substr(pos, end - pos);
    if (!item.empty()) {
      const size_t dash = item.find('-');
      char* rest = nullptr;
      const long a = std::strtol(item.c_str(), &rest, 10);
      long b = a;
      if (dash != std::string::npos)
        b = std::strtol(item.c_str() + dash + 1, &rest, 10);
      if (*rest != '\0' || b < a) return false;
      for (long i = a; i <= b; ++i) out->insert(static_cast<int>(i));
    }
    pos = end + 1;
  }
  return true;
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--seed" && has_value) {
      o->gen.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--ops" && has_value) {
      o->gen.ops = std::atoi(argv[++i]);
    } else if (a == "--keep-phases" && has_value) {
      if (!ParseList(argv[++i], &o->filter.keep_phases)) return false;
      // An empty list would mean "all": keep an impossible phase instead.
      if (o->filter.keep_phases.empty()) o->filter.keep_phases.insert(-1);
    } else if (a == "--drop-ops" && has_value) {
      if (!ParseList(argv[++i], &o->filter.drop_ops)) return false;
    } else if (a == "--exclude" && has_value) {
      std::string list = argv[++i];
      size_t pos = 0;
      while (pos <= list.size()) {
        size_t end = list.find(',', pos);
        if (end == std::string::npos) end = list.size();
        const std::string f = list.substr(pos, end - pos);
        if (f != "win_test" && f != "fop_pairs" && !f.empty()) return false;
        if (!f.empty()) o->gen.exclude.insert(f);
        pos = end + 1;
      }
    } else if (a == "--count" && has_value) {
      o->count = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--timeout" && has_value) {
      o->timeout = std::atoi(argv[++i]);
    } else if (a == "--expect-file" && has_value) {
      o->expect_file = argv[++i];
    } else if (a == "--no-model") {
      o->model = false;
    } else if (a == "--print") {
      o->print = true;
    } else if (a == "--dump") {
      o->dump = true;
    } else {
      return false;
    }
  }
  return true;
}

// Exit status of a run that differs from the model (model.h).
constexpr int kModelDiverged = 5;

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

struct WindowRt {
  MPI_Win win = MPI_WIN_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Group group = MPI_GROUP_NULL;
  int g = 0;     // communicator instance
  int rank = 0;  // window rank
  std::byte* base = nullptr;
  MPI_Aint bytes = 0;
  void* created = nullptr;  // MPI_Win_create and dynamic windows' memory
  // Dynamic windows: each window rank's attached memory (MPI_Get_address);
  // their displacements are addresses.
  std::vector<MPI_Aint> attached;

  // Memory the program provides (create and dynamic flavors).
  std::byte* AllocateOwn() {
    created = std::aligned_alloc(64, (bytes + 64) / 64 * 64);
    return static_cast<std::byte*>(created);
  }
  MPI_Aint Disp(int target, MPI_Aint disp) const {
    if (attached.empty() || target == MPI_PROC_NULL) return disp;
    return MPI_Aint_add(attached[target], disp);
  }
};

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

// ---- Executing a rank's part of a phase.

using OpRt = OpBuffers;

class Executor {
 public:
  // `model`: what the run must match (nullptr: not checked).
  Executor(const Program& prog, const Options& opts, int me,
           const ModelOutcome* model)
      : prog_(prog), opts_(opts), me_(me), model_(model) {}

  void Run();
  const std::vector<std::string>& lines() const { return lines_; }
  // Differences from the model found on this rank.
  long divergences() const { return divergences_; }

 private:
  void RunPhase(const Phase& p);
  void RunOp(const Op& op, OpRt& rt, const WindowRt& w,
             std::vector<MPI_Request>& reqs);
  void RunRmw(const Op& op, const WindowRt& w);
  void WaitFor(const Action& a, std::vector<MPI_Request>& reqs);
  void RecordOp(const Phase& p, const Op& op, int index, const OpRt& rt,
                std::vector<std::byte>* ordered);
  void Diverged(const char* what, const std::vector<std::byte>& want,
                const std::vector<std::byte>& got);
  void FinalDigest();

  const Program& prog_;
  const Options& opts_;
  int me_;
  std::vector<WindowRt> windows_;
  const ModelOutcome* model_;
  std::vector<std::string> lines_;
  int ops_run_ = 0;
  long divergences_ = 0;
};

void Executor::Run() {
  for (size_t w = 0; w < prog_.windows.size(); ++w) {
    windows_.push_back(OpenWindow(prog_, static_cast<int>(w), me_));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (const Phase& p : prog_.phases) {
    if (opts_.filter.Keeps(p)) RunPhase(p);
  }
  SetStep("final digest");
  FinalDigest();
  if (model_ != nullptr && model_->ops_run[me_] != ops_run_) {
    Diverged("operation count", {}, {});
  }
  char line[64];
  snprintf(line, sizeof line, "C r%03d ops %d", me_, ops_run_);
  lines_.push_back(line);
  for (WindowRt& w : windows_) {
    SetStep("freeing windows");
    MPI_Group_free(&w.group);
    if (!w.attached.empty() && w.bytes > 0) {
      Check(MPI_Win_detach(w.win, w.base), "MPI_Win_detach");
    }
    Check(MPI_Win_free(&w.win), "MPI_Win_free");
    MPI_Comm_free(&w.comm);
    std::free(w.created);
  }
}

void Executor::RunOp(const Op& op, OpRt& rt, const WindowRt& w,
                     std::vector<MPI_Request>& reqs) {
  const MPI_Win win = w.win;
  if (op.kind == OpKind::kRmw) {
    RunRmw(op, w);
    return;
  }
  const ElemType& e = Elem(op.elem);
  rt = MakeOpBuffers(op);
  void* origin = op.null_origin ? nullptr : rt.origin.ptr;
  MPI_Datatype bottom_type = MPI_DATATYPE_NULL;
  int oc = op.origin.count;
  MPI_Datatype ot = op.origin.type->mpi;
  if (op.bottom) {
    // The same buffer as MPI_BOTTOM plus absolute addresses; freed at once
    // (MPI keeps what a pending operation still needs).
    MPI_Aint at = 0;
    MPI_Get_address(rt.origin.ptr, &at);
    const int blocklen = oc;
    MPI_Type_create_hindexed(1, &blocklen, &at, ot, &bottom_type);
    MPI_Type_commit(&bottom_type);
    origin = MPI_BOTTOM;
    oc = 1;
    ot = bottom_type;
  }
  const int t = op.target;
  const MPI_Aint d = w.Disp(t, op.disp);
  const int tc = op.target_buf.count, rc = op.result.count;
  const MPI_Datatype tt = op.target_buf.type->mpi,
                     rty = op.result.type ? op.result.type->mpi
                                          : MPI_DATATYPE_NULL;
  MPI_Request* req = op.request >= 0 ? &reqs[op.request] : nullptr;
  switch (op.kind) {
    case OpKind::kPut:
      Check(MPI_Put(origin, oc, ot, t, d, tc, tt, win), "MPI_Put");
      break;
    case OpKind::kGet:
      Check(MPI_Get(op.bottom ? MPI_BOTTOM : rt.origin.ptr, oc, ot, t, d, tc,
                    tt, win),
            "MPI_Get");
      break;
    case OpKind::kAcc:
      Check(MPI_Accumulate(origin, oc, ot, t, d, tc, tt, op.op, win),
            "MPI_Accumulate");
      break;
    case OpKind::kGacc:
      Check(MPI_Get_accumulate(origin, oc, ot, rt.result.ptr, rc, rty, t, d, tc,
                               tt, op.op, win),
            "MPI_Get_accumulate");
      break;
    case OpKind::kFop:
      Check(MPI_Fetch_and_op(origin, rt.result.ptr, e.type, t, d, op.op, win),
            "MPI_Fetch_and_op");
      break;
    case OpKind::kCas:
      Check(MPI_Compare_and_swap(origin, rt.compare.ptr, rt.result.ptr, e.type,
                                 t, d, win),
            "MPI_Compare_and_swap");
      break;
    case OpKind::kRput:
      Check(MPI_Rput(origin, oc, ot, t, d, tc, tt, win, req), "MPI_Rput");
      break;
    case OpKind::kRget:
      Check(MPI_Rget(op.bottom ? MPI_BOTTOM : rt.origin.ptr, oc, ot, t, d, tc,
                     tt, win, req),
            "MPI_Rget");
      break;
    case OpKind::kRacc:
      Check(MPI_Raccumulate(origin, oc, ot, t, d, tc, tt, op.op, win, req),
            "MPI_Raccumulate");
      break;
    case OpKind::kRgacc:
      Check(MPI_Rget_accumulate(origin, oc, ot, rt.result.ptr, rc, rty, t, d,
                                tc, tt, op.op, win, req),
            "MPI_Rget_accumulate");
      break;
    case OpKind::kRmw:
      break;
  }
  if (bottom_type != MPI_DATATYPE_NULL) MPI_Type_free(&bottom_type);
}

// Counter: read, flush, add, write back, flush; the caller holds an
// exclusive lock on the target, so the update is never lost.
void Executor::RunRmw(const Op& op, const WindowRt& w) {
  const ElemType& e = Elem(op.elem);
  std::byte value[16] = {}, ignored[16] = {};
  const int t = op.target;
  const MPI_Aint d = w.Disp(t, op.disp);
  const MPI_Win win = w.win;
  switch (op.rmw_read) {
    case 0:
      Check(MPI_Get(value, 1, e.type, t, d, 1, e.type, win), "MPI_Get");
      break;
    case 1:
      Check(MPI_Fetch_and_op(ignored, value, e.type, t, d, MPI_NO_OP, win),
            "MPI_Fetch_and_op");
      break;
    default:
      Check(MPI_Get_accumulate(ignored, 1, e.type, value, 1, e.type, t, d, 1,
                               e.type, MPI_NO_OP, win),
            "MPI_Get_accumulate");
      break;
  }
  Check(MPI_Win_flush(t, win), "MPI_Win_flush");
  AddDelta(e, value, op.delta);
  switch (op.rmw_write) {
    case 0:
      Check(MPI_Put(value, 1, e.type, t, d, 1, e.type, win), "MPI_Put");
      break;
    case 1:
      Check(MPI_Accumulate(value, 1, e.type, t, d, 1, e.type, MPI_REPLACE, win),
            "MPI_Accumulate");
      break;
    default:
      Check(MPI_Fetch_and_op(value, ignored, e.type, t, d, MPI_REPLACE, win),
            "MPI_Fetch_and_op");
      break;
  }
  Check(MPI_Win_flush(t, win), "MPI_Win_flush");
}

void Executor::WaitFor(const Action& a, std::vector<MPI_Request>& reqs) {
  std::vector<MPI_Request> v;
  for (int q : a.requests) v.push_back(reqs[q]);
  const int n = static_cast<int>(v.size());
  switch (a.method) {
    case WaitMethod::kWaitEach:
      for (MPI_Request& r : v)
        Check(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
      break;
    case WaitMethod::kWaitall:
      Check(MPI_Waitall(n, v.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
      break;
    case WaitMethod::kTestLoop:
      for (MPI_Request& r : v) {
        int flag = 0;
        while (!flag) Check(MPI_Test(&r, &flag, MPI_STATUS_IGNORE), "MPI_Test");
      }
      break;
    case WaitMethod::kWaitany:
      for (;;) {
        int index = 0;
        Check(MPI_Waitany(n, v.data(), &index, MPI_STATUS_IGNORE),
              "MPI_Waitany");
        if (index == MPI_UNDEFINED) break;
      }
      break;
    case WaitMethod::kWaitsome:
      for (;;) {
        int outcount = 0;
        std::vector<int> indices(n);
        Check(MPI_Waitsome(n, v.data(), &outcount, indices.data(),
                           MPI_STATUSES_IGNORE),
              "MPI_Waitsome");
        if (outcount == MPI_UNDEFINED) break;
      }
      break;
    case WaitMethod::kTestall:
      for (int flag = 0; !flag;) {
        Check(MPI_Testall(n, v.data(), &flag, MPI_STATUSES_IGNORE),
              "MPI_Testall");
      }
      break;
  }
  for (size_t i = 0; i < a.requests.size(); ++i) {
    reqs[a.requests[i]] = v[i];
    if (v[i] != MPI_REQUEST_NULL) {
      std::fprintf(stderr, "[rank %d] request req%d not freed by %s\n", me_,
                   a.requests[i], g_step);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
}

void Executor::RecordOp(const Phase& p, const Op& op, int index, const OpRt& rt,
                        std::vector<std::byte>* ordered) {
  const Buffer* buf = FetchedBuffer(op, rt);
  if (buf == nullptr) return;
  const std::vector<std::byte> got = Digestible(*buf, op.elem, false);
  if (op.record == Record::kMultiset) {
    const WindowSpec& w = prog_.windows[p.window];
    const int target_world = w.groups[windows_[p.window].g][op.target];
    lines_.push_back(MultisetKey(p, op, target_world) + " " + Hex(got));
    return;
  }
  const std::vector<std::byte> recorded = Recorded(op, *buf);
  ordered->insert(ordered->end(), recorded.begin(), recorded.end());
  if (model_ != nullptr) {
    const std::vector<std::byte>& want =
        model_->fetched.at(p.index).at(me_)[index];
    if (want != recorded) {
      char what[160];
      snprintf(what, sizeof what, "phase %d op #%d %s (%s) fetched", p.index,
               op.id, OpKindName(op.kind), op.note);
      Diverged(what, want, recorded);
    }
  }
}

// A difference from the model: counted, and the first few described.
void Executor::Diverged(const char* what, const std::vector<std::byte>& want,
                        const std::vector<std::byte>& got) {
  if (divergences_++ >= 8) return;
  size_t at = 0;
  while (at < want.size() && at < got.size() && want[at] == got[at]) ++at;
  std::fprintf(stderr,
               "[rank %d] MODEL DIVERGENCE seed %llu: %s: %zu bytes, first "
               "difference at byte %zu: model %02x, run %02x\n",
               me_, static_cast<unsigned long long>(prog_.seed), what,
               want.size(), at,
               at < want.size() ? static_cast<unsigned>(want[at]) : 0u,
               at < got.size() ? static_cast<unsigned>(got[at]) : 0u);
}

void Executor::RunPhase(const Phase& p) {
  WindowRt& w = windows_[p.window];
  const RankPlan& plan = p.plans[w.g][w.rank];
  std::vector<OpRt> rts(plan.ops.size());
  std::vector<MPI_Request> reqs(plan.requests, MPI_REQUEST_NULL);
  const MPI_Win win = w.win;
  for (size_t i = 0; i < plan.actions.size(); ++i) {
    const Action& a = plan.actions[i];
    SetStep("phase %d action %zu", p.index, i);
    switch (a.act) {
      case Act::kOp: {
        const Op& op = plan.ops[a.op];
        if (!opts_.filter.Keeps(op)) break;
        SetStep("phase %d action %zu op #%d %s", p.index, i, op.id,
                OpKindName(op.kind));
        RunOp(op, rts[a.op], w, reqs);
        ++ops_run_;
        break;
      }
      case Act::kFence:
        Check(MPI_Win_fence(a.assert_, win), "MPI_Win_fence");
        break;
      case Act::kPost:
      case Act::kStart: {
        MPI_Group g;
        MPI_Group_incl(w.group, static_cast<int>(a.group.size()),
                       a.group.data(), &g);
        if (a.act == Act::kPost) {
          Check(MPI_Win_post(g, a.assert_, win), "MPI_Win_post");
        } else {
          Check(MPI_Win_start(g, a.assert_, win), "MPI_Win_start");
        }
        MPI_Group_free(&g);
        break;
      }
      case Act::kComplete:
        Check(MPI_Win_complete(win), "MPI_Win_complete");
        break;
      case Act::kWait:
        Check(MPI_Win_wait(win), "MPI_Win_wait");
        break;
      case Act::kTestLoop:
        for (int flag = 0; !flag;)
          Check(MPI_Win_test(win, &flag), "MPI_Win_test");
        break;
      case Act::kCommBarrier:
        MPI_Barrier(w.comm);
        break;
      case Act::kLock:
        Check(MPI_Win_lock(a.lock_type, a.target, a.assert_, win),
              "MPI_Win_lock");
        break;
      case Act::kUnlock:
        Check(MPI_Win_unlock(a.target, win), "MPI_Win_unlock");
        break;
      case Act::kLockAll:
        Check(MPI_Win_lock_all(a.assert_, win), "MPI_Win_lock_all");
        break;
      case Act::kUnlockAll:
        Check(MPI_Win_unlock_all(win), "MPI_Win_unlock_all");
        break;
      case Act::kFlush:
        Check(MPI_Win_flush(a.target, win), "MPI_Win_flush");
        break;
      case Act::kFlushLocal:
        Check(MPI_Win_flush_local(a.target, win), "MPI_Win_flush_local");
        break;
      case Act::kFlushAll:
        Check(MPI_Win_flush_all(win), "MPI_Win_flush_all");
        break;
      case Act::kFlushLocalAll:
        Check(MPI_Win_flush_local_all(win), "MPI_Win_flush_local_all");
        break;
      case Act::kSync:
        Check(MPI_Win_sync(win), "MPI_Win_sync");
        break;
      case Act::kWaitRequests:
        WaitFor(a, reqs);
        break;
    }
  }
  SetStep("phase %d: closing barrier", p.index);
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<std::byte> ordered;
  size_t recorded = 0;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const Op& op = plan.ops[i];
    if (!opts_.filter.Keeps(op)) continue;
    RecordOp(p, op, static_cast<int>(i), rts[i], &ordered);
    ++recorded;
  }
  if (!ordered.empty()) {
    char line[96];
    snprintf(line, sizeof line, "O p%05d r%03d n %zu hash %016" PRIx64, p.index,
             me_, ordered.size(),
             Fnv(kFnvInit, ordered.data(), ordered.size()));
    lines_.push_back(std::string(line) +
                     (opts_.dump ? " data " + Hex(ordered) : std::string()));
  }
}

void Executor::FinalDigest() {
  for (size_t w = 0; w < windows_.size(); ++w) {
    WindowRt& rt = windows_[w];
    const WindowSpec& spec = prog_.windows[w];
    Check(MPI_Win_lock(MPI_LOCK_SHARED, rt.rank,
                       spec.nocheck_locks ? MPI_MODE_NOCHECK : 0, rt.win),
          "MPI_Win_lock");
    Check(MPI_Win_sync(rt.win), "MPI_Win_sync");
    std::vector<std::byte> mem(rt.base, rt.base + rt.bytes);
    Check(MPI_Win_unlock(rt.rank, rt.win), "MPI_Win_unlock");
    for (int r = 0; r < spec.regions_on[me_]; ++r) {
      const Region& reg = spec.regions[r];
      const ElemType& e = Elem(reg.elem);
      for (int i = 0; i < reg.count; ++i) {
        MaskPadding(e, mem.data() + reg.offset + i * e.extent);
      }
    }
    if (model_ != nullptr && model_->memory[w][me_] != mem) {
      char what[64];
      snprintf(what, sizeof what, "window w%zu final memory", w);
      Diverged(what, model_->memory[w][me_], mem);
    }
    char line[96];
    snprintf(line, sizeof line, "W w%d r%03d n %zu hash %016" PRIx64,
             static_cast<int>(w), me_, mem.size(),
             Fnv(kFnvInit, mem.data(), mem.size()));
    lines_.push_back(std::string(line) +
                     (opts_.dump ? " data " + Hex(mem) : std::string()));
  }
}

// Rank 0 gathers every rank's lines, folds multisets (values sorted, so
// the order the accumulates ran in does not show), sorts and prints; with
// a model, returns how many multisets differ from it (rank 0; else 0).
long Report(const std::vector<std::string>& mine, int me, int size,
            const Program& prog, bool dump, const ModelOutcome* model) {
  std::string blob;
  for (const std::string& l : mine) blob += l + "\n";
  int len = static_cast<int>(blob.size());
  std::vector<int> lens(size), displs(size);
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (me == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      displs[r] = total;
      total += lens[r];
    }
    all.resize(total);
  }
  MPI_Gatherv(blob.data(), len, MPI_CHAR, all.data(), lens.data(),
              displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (me != 0) return 0;
  std::vector<std::string> out;
  std::map<std::string, std::vector<std::string>> multisets;
  size_t pos = 0;
  while (pos < all.size()) {
    const size_t end = all.find('\n', pos);
    const std::string line = all.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("M ", 0) == 0) {
      const size_t space = line.rfind(' ');
      multisets[line.substr(0, space)].push_back(line.substr(space + 1));
    } else {
      out.push_back(line);
    }
  }
  long diverged = 0;
  for (auto& [key, values] : multisets) {
    std::sort(values.begin(), values.end());
    if (model != nullptr) {
      const auto it = model->multisets.find(key);
      if (it == model->multisets.end() || it->second != values) {
        if (diverged++ < 8) {
          std::fprintf(stderr,
                       "[rank 0] MODEL DIVERGENCE seed %llu: multiset %s: "
                       "model %zu values, run %zu, or different values\n",
                       static_cast<unsigned long long>(prog.seed), key.c_str(),
                       it == model->multisets.end() ? 0 : it->second.size(),
                       values.size());
        }
      }
    }
    uint64_t h = kFnvInit;
    std::string joined;
    for (const std::string& v : values) {
      h = Fnv(h, v.data(), v.size());
      joined += " " + v;
    }
    char line[160];
    snprintf(line, sizeof line, "%s values %zu hash %016" PRIx64, key.c_str(),
             values.size(), h);
    out.push_back(std::string(line) +
                  (dump ? " data" + joined : std::string()));
  }
  std::sort(out.begin(), out.end());
  std::printf("rma_fuzz seed %llu ranks %d nodes %d phases %zu ops %d\n",
              static_cast<unsigned long long>(prog.seed), size,
              prog.layout.nodes, prog.phases.size(), prog.total_ops);
  for (const std::string& l : out) std::printf("%s\n", l.c_str());
  std::fflush(stdout);
  if (model != nullptr && model->multisets.size() != multisets.size()) {
    ++diverged;  // a multiset the run did not record at all
  }
  return diverged;
}

// ---- What the shim must show (--expect-file).

// Windows (profile records: one per communicator instance) per flavor, and
// the operations, summed over ranks, that librmashim.so serves directly by
// design (docs/how-it-works.md; README.md, "Limitations"): on an allocate,
// shared or create window whose ranks share one node, every node-local
// operation (self included); on a window spanning nodes, node-local put/get
// (request-based too, and the put/get halves of counters) outside PSCW
// epochs, and node-local accumulates while the origin holds an exclusive
// lock on the target (the rest of the accumulate family and PSCW go to MPI
// there). On MPI_Win_create windows (cross-memory attach) only for elements
// other than MINLOC/MAXLOC pairs (layouts with padding inside elements may
// go to MPI). MPI_PROC_NULL targets are not operations.
struct Expectation {
  long windows[4] = {};  // by Flavor
  long direct = 0;
};

void ExpectDirect(const Program& prog, const Filter& filter, Expectation* e) {
  for (const WindowSpec& w : prog.windows) {
    e->windows[static_cast<int>(w.flavor)] +=
        static_cast<long>(w.groups.size());
  }
  for (const Phase& p : prog.phases) {
    if (!filter.Keeps(p)) continue;
    const WindowSpec& w = prog.windows[p.window];
    if (w.flavor == Flavor::kDynamic) continue;
    const bool create = w.flavor == Flavor::kCreate;
    for (size_t g = 0; g < w.groups.size(); ++g) {
      const std::vector<int>& group = w.groups[g];
      bool one_node = true;
      for (int r : group) {
        one_node =
            one_node && prog.layout.node_of[r] == prog.layout.node_of[group[0]];
      }
      for (size_t r = 0; r < p.plans[g].size(); ++r) {
        const RankPlan& plan = p.plans[g][r];
        std::set<int> exclusive;  // targets this rank holds locked exclusively
        for (const Action& a : plan.actions) {
          if (a.act == Act::kLock && a.lock_type == MPI_LOCK_EXCLUSIVE) {
            exclusive.insert(a.target);
          } else if (a.act == Act::kUnlock) {
            exclusive.erase(a.target);
          }
          if (a.act != Act::kOp) continue;
          const Op& op = plan.ops[a.op];
          if (!filter.Keeps(op) || op.target == MPI_PROC_NULL) continue;
          if (prog.layout.node_of[group[r]] !=
              prog.layout.node_of[group[op.target]]) {
            continue;  // remote: MPI's
          }
          if (create && (Elem(op.elem).group & kPair) != 0) continue;
          const bool put_get =
              op.kind == OpKind::kPut || op.kind == OpKind::kGet ||
              op.kind == OpKind::kRput || op.kind == OpKind::kRget;
          const bool all = one_node || exclusive.count(op.target) != 0;
          if (op.kind == OpKind::kRmw) {  // a read, then a write (RunRmw)
            e->direct += all ? 2 : (op.rmw_read == 0) + (op.rmw_write == 0);
          } else if (all || (put_get && p.kind != PhaseKind::kPscw)) {
            e->direct += 1;
          }
        }
      }
    }
  }
}

void WriteExpectation(const std::string& path, const Expectation& e) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "rma_fuzz: cannot write %s\n", path.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  std::fprintf(f, "allocate=%ld shared=%ld create=%ld dynamic=%ld direct=%ld\n",
               e.windows[static_cast<int>(Flavor::kAllocate)],
               e.windows[static_cast<int>(Flavor::kShared)],
               e.windows[static_cast<int>(Flavor::kCreate)],
               e.windows[static_cast<int>(Flavor::kDynamic)], e.direct);
  std::fclose(f);
}

int Main(int argc, char** argv) {
  Options opts;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  if (!ParseArgs(argc, argv, &opts)) {
    if (g_rank == 0) {
      std::fprintf(stderr,
                   "usage: rma_fuzz --seed S [--ops N] [--keep-phases LIST] "
                   "[--drop-ops LIST] [--exclude FEATURES] [--print] [--dump] "
                   "[--count K] [--timeout SECONDS] [--expect-file PATH] "
                   "[--no-model]\n");
    }
    MPI_Finalize();
    return 2;
  }
  g_timeout = opts.timeout;
  signal(SIGALRM, OnAlarm);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const Layout layout = LearnLayout();
  Expectation expectation;
  long model_divergences = 0;
  // --count K: seeds S..S+K-1 in one MPI job, one after another (saves the
  // start-up of K-1 jobs; each program frees everything it created).
  for (int k = 0; k < opts.count; ++k) {
    alarm(opts.timeout);  // per program
    GenOptions gen = opts.gen;
    gen.seed += k;
    SetStep("generating seed %llu", static_cast<unsigned long long>(gen.seed));
    const Program prog = Generate(gen, layout);
    ExpectDirect(prog, opts.filter, &expectation);
    if (opts.print) {
      if (g_rank == 0) std::fputs(Listing(prog, opts.filter).c_str(), stdout);
    } else {
      const ModelOutcome model = RunModel(prog, opts.filter);
      Executor exec(prog, opts, g_rank, opts.model ? &model : nullptr);
      exec.Run();
      SetStep("report");
      long diverged =
          exec.divergences() + Report(exec.lines(), g_rank, size, prog,
                                      opts.dump, opts.model ? &model : nullptr);
      long total = 0;
      MPI_Allreduce(&diverged, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      if (opts.model && g_rank == 0) {
        // Outside the digest (native and shim runs may differ here).
        std::fprintf(
            stderr, "rma_fuzz seed %llu: %s (%ld divergences)\n",
            static_cast<unsigned long long>(prog.seed),
            total == 0 ? "matches the model" : "DIVERGES FROM THE MODEL",
            total);
      }
      model_divergences += total;
    }
  }  // datatypes are freed with each program, before MPI_Finalize
  if (!opts.expect_file.empty() && g_rank == 0) {
    WriteExpectation(opts.expect_file, expectation);
  }
  alarm(opts.timeout);
  SetStep("MPI_Finalize");
  MPI_Finalize();
  return model_divergences == 0 ? 0 : kModelDiverged;
}

}  // namespace
}  // namespace rma_fuzz

int main(int argc, char** argv) { return rma_fuzz::Main(argc, argv); }
