// Human-readable listing of a generated program (--print), for reproducing
// and reading minimized failures.
#include <cstdarg>
#include <cstdio>

#include "tests/fuzz/program.h"

namespace rma_fuzz {
namespace {

void Appendf(std::string* out, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  *out += buf;
}

const char* FlavorName(Flavor f) {
  switch (f) {
    case Flavor::kAllocate:
      return "MPI_Win_allocate";
    case Flavor::kShared:
      return "MPI_Win_allocate_shared";
    case Flavor::kCreate:
      return "MPI_Win_create";
    case Flavor::kDynamic:
      return "MPI_Win_create_dynamic";
  }
  return "?";
}

const char* CommName(CommKind c) {
  switch (c) {
    case CommKind::kWorld:
      return "world";
    case CommKind::kWorldReversed:
      return "world reversed";
    case CommKind::kNode:
      return "node";
    case CommKind::kNodeReversed:
      return "node reversed";
  }
  return "?";
}

std::string Asserts(int a) {
  if (a == 0) return "0";
  std::string s;
  auto add = [&](int bit, const char* name) {
    if (!(a & bit)) return;
    if (!s.empty()) s += "|";
    s += name;
  };
  add(MPI_MODE_NOCHECK, "NOCHECK");
  add(MPI_MODE_NOSTORE, "NOSTORE");
  add(MPI_MODE_NOPUT, "NOPUT");
  add(MPI_MODE_NOPRECEDE, "NOPRECEDE");
  add(MPI_MODE_NOSUCCEED, "NOSUCCEED");
  return s;
}

std::string Buf(const TypedBuf& b) {
  return std::to_string(b.count) + " x " + Describe(*b.type);
}

const char* WaitName(WaitMethod m) {
  switch (m) {
    case WaitMethod::kWaitEach:
      return "MPI_Wait each";
    case WaitMethod::kWaitall:
      return "MPI_Waitall";
    case WaitMethod::kTestLoop:
      return "MPI_Test loop";
    case WaitMethod::kWaitany:
      return "MPI_Waitany loop";
    case WaitMethod::kWaitsome:
      return "MPI_Waitsome loop";
    case WaitMethod::kTestall:
      return "MPI_Testall loop";
  }
  return "?";
}

std::string Ranks(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(v[i]);
  }
  return s;
}

void ListOp(const Op& op, const std::vector<int>& world, std::string* out) {
  Appendf(out, "      #%d %s", op.id, OpKindName(op.kind));
  if (op.target == MPI_PROC_NULL) {
    Appendf(out, " -> MPI_PROC_NULL");
  } else {
    Appendf(out, " -> %d (world %d) r%d[%ld] disp %ld", op.target,
            world[op.target], op.region, op.base_slot,
            static_cast<long>(op.disp));
  }
  if (op.op != MPI_OP_NULL) Appendf(out, " %s", OpName(op.op));
  switch (op.kind) {
    case OpKind::kFop:
    case OpKind::kCas:
      Appendf(out, " type %s", Elem(op.elem).name);
      break;
    case OpKind::kRmw: {
      static const char* kRead[] = {"get", "fetch_and_op(NO_OP)",
                                    "get_accumulate(NO_OP)"};
      static const char* kWrite[] = {"put", "accumulate(REPLACE)",
                                     "fetch_and_op(REPLACE)"};
      Appendf(out, " %s: %s, flush, %s(+%d), flush", Elem(op.elem).name,
              kRead[op.rmw_read], kWrite[op.rmw_write], op.delta);
      break;
    }
    default:
      Appendf(out, " origin %s%s, target %s", Buf(op.origin).c_str(),
              op.null_origin ? " (NULL)"
              : op.bottom    ? " (at MPI_BOTTOM)"
                             : "",
              Buf(op.target_buf).c_str());
      if (op.kind == OpKind::kGacc || op.kind == OpKind::kRgacc) {
        Appendf(out, ", result %s", Buf(op.result).c_str());
      }
      break;
  }
  if (op.request >= 0) Appendf(out, " req%d", op.request);
  Appendf(out, " [%s%s]\n", op.note,
          op.record == Record::kOrdered    ? ", recorded"
          : op.record == Record::kMultiset ? ", multiset"
                                           : "");
}

}  // namespace

std::string Listing(const Program& prog, const Filter& filter) {
  std::string out;
  Appendf(&out,
          "program seed %llu: %d ranks, nodes [%s], %zu windows, %zu phases, "
          "%d ops\n",
          static_cast<unsigned long long>(prog.seed), prog.layout.size,
          Ranks(prog.layout.node_of).c_str(), prog.windows.size(),
          prog.phases.size(), prog.total_ops);
  std::vector<bool> used(prog.windows.size());
  for (const Phase& p : prog.phases) {
    if (filter.Keeps(p)) used[p.window] = true;
  }
  for (const std::string& f : prog.excluded)
    Appendf(&out, "excluded: %s\n", f.c_str());
  for (size_t i = 0; i < prog.windows.size(); ++i) {
    const WindowSpec& w = prog.windows[i];
    if (!used[i]) {  // created and freed, never accessed
      Appendf(&out, "window w%zu: %s (no phase uses it)\n", i,
              FlavorName(w.flavor));
      continue;
    }
    Appendf(&out, "window w%zu: %s over %s communicator%s%s\n", i,
            FlavorName(w.flavor), CommName(w.comm),
            w.noncontig ? " (alloc_shared_noncontig)" : "",
            w.nocheck_locks ? ", NOCHECK locks" : "");
    for (size_t g = 0; g < w.groups.size(); ++g) {
      Appendf(&out, "  group %zu: world ranks [%s] as window ranks 0..%zu\n", g,
              Ranks(w.groups[g]).c_str(), w.groups[g].size() - 1);
    }
    for (size_t r = 0; r < w.regions.size(); ++r) {
      const Region& reg = w.regions[r];
      Appendf(&out, "  r%zu: %d x %s at byte %ld\n", r, reg.count,
              Elem(reg.elem).name, static_cast<long>(reg.offset));
    }
    for (int r = 0; r < prog.layout.size; ++r) {
      Appendf(&out, "  world rank %d: %ld bytes, disp_unit %d, regions 0..%d\n",
              r, static_cast<long>(w.bytes[r]), w.disp_unit[r],
              w.regions_on[r] - 1);
    }
  }
  for (const Phase& p : prog.phases) {
    if (!filter.Keeps(p)) continue;
    static const char* kKinds[] = {"fence", "pscw", "passive"};
    Appendf(&out, "phase %d: %s on w%d%s%s\n", p.index,
            kKinds[static_cast<int>(p.kind)], p.window,
            p.label.empty() ? "" : ", ", p.label.c_str());
    const WindowSpec& w = prog.windows[p.window];
    for (size_t g = 0; g < p.plans.size(); ++g) {
      const std::vector<int>& world = w.groups[g];
      for (size_t r = 0; r < p.plans[g].size(); ++r) {
        const RankPlan& plan = p.plans[g][r];
        if (plan.actions.empty()) continue;
        Appendf(&out, "  window rank %zu (world %d):\n", r, world[r]);
        for (const Action& a : plan.actions) {
          switch (a.act) {
            case Act::kOp:
              if (filter.Keeps(plan.ops[a.op]))
                ListOp(plan.ops[a.op], world, &out);
              break;
            case Act::kFence:
              Appendf(&out, "    fence %s\n", Asserts(a.assert_).c_str());
              break;
            case Act::kPost:
              Appendf(&out, "    post [%s] %s\n", Ranks(a.group).c_str(),
                      Asserts(a.assert_).c_str());
              break;
            case Act::kStart:
              Appendf(&out, "    start [%s] %s\n", Ranks(a.group).c_str(),
                      Asserts(a.assert_).c_str());
              break;
            case Act::kComplete:
              Appendf(&out, "    complete\n");
              break;
            case Act::kWait:
              Appendf(&out, "    wait\n");
              break;
            case Act::kTestLoop:
              Appendf(&out, "    test until done\n");
              break;
            case Act::kCommBarrier:
              Appendf(&out, "    barrier (window communicator)\n");
              break;
            case Act::kLock:
              Appendf(
                  &out, "    lock %s %d %s\n",
                  a.lock_type == MPI_LOCK_EXCLUSIVE ? "exclusive" : "shared",
                  a.target, Asserts(a.assert_).c_str());
              break;
            case Act::kUnlock:
              Appendf(&out, "    unlock %d\n", a.target);
              break;
            case Act::kLockAll:
              Appendf(&out, "    lock_all %s\n", Asserts(a.assert_).c_str());
              break;
            case Act::kUnlockAll:
              Appendf(&out, "    unlock_all\n");
              break;
            case Act::kFlush:
              Appendf(&out, "    flush %d\n", a.target);
              break;
            case Act::kFlushLocal:
              Appendf(&out, "    flush_local %d\n", a.target);
              break;
            case Act::kFlushAll:
              Appendf(&out, "    flush_all\n");
              break;
            case Act::kFlushLocalAll:
              Appendf(&out, "    flush_local_all\n");
              break;
            case Act::kSync:
              Appendf(&out, "    win_sync\n");
              break;
            case Act::kWaitRequests: {
              std::string reqs;
              for (int q : a.requests) reqs += " req" + std::to_string(q);
              Appendf(&out, "    %s:%s\n", WaitName(a.method), reqs.c_str());
              break;
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace rma_fuzz
