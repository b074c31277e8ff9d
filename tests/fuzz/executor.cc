// Running a program on MPI and checking it against the model
// (executor.h).
#include "tests/fuzz/executor.h"

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

namespace rma_fuzz {
namespace run {

// ---- Executing a rank's part of a phase.

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

}  // namespace run
}  // namespace rma_fuzz
