// The program generator. Validity rules it keeps (MPI-3.1 chapter 11):
// - Within one epoch every region of a target has one mode: owned by one
//   origin (anything, but that origin's put/get never overlap another of its
//   accesses before a flush/unlock completes it; accumulates from one origin
//   are ordered), shared accumulate (one op, same predefined type, from any
//   origin), read-only, tickets, compare-and-swap of one value, or a counter
//   that only exclusive-lock holders read-modify-write.
// - Every rank takes part in every collective synchronization; locks are
//   taken in increasing target order (no deadlock); assertions are only
//   given where they hold.
#include <algorithm>
#include <cstdio>
#include <map>

#include "tests/fuzz/phase_gen.h"
#include "tests/fuzz/program.h"

namespace rma_fuzz {
namespace gen {

void PhaseGen::AssignModes(const std::vector<std::set<int>>& access,
                           const std::vector<std::set<int>>& exclusive) {
  state_.assign(n(), {});
  updated_.assign(n(), false);
  for (int t = 0; t < n(); ++t) {
    for (int r = 0; r < Regions(t); ++r) {
      const Region& reg = Reg(r);
      const ElemType& e = Elem(reg.elem);
      RegionState s;
      s.marks.assign(reg.count, 0);
      if (!access[t].empty()) {
        const std::vector<MPI_Op> shared_ops = AccumulateOps(e, true);
        const std::vector<long> slots = AlignedSlots(t, r, 0, reg.count - 1);
        const bool has_slot = !slots.empty();
        const int pick = rng_.Weighted({
            1,                                     // idle
            6,                                     // owned
            shared_ops.empty() ? 0 : 3,            // shared
            2,                                     // read-only
            TicketOk(e) && has_slot ? 2 : 0,       // ticket
            CompareSwapOk(e) && has_slot ? 1 : 0,  // cas-same
            CounterOk(e) && has_slot && !exclusive[t].empty() ? 4 : 0,
        });
        s.mode = static_cast<Mode>(pick);
        switch (s.mode) {
          case Mode::kOwned: {
            std::vector<int> who(access[t].begin(), access[t].end());
            s.owner = rng_.Pick(who);
            break;
          }
          case Mode::kShared:
            s.op = rng_.Pick(shared_ops);
            break;
          case Mode::kTicket:
          case Mode::kCasSame:
          case Mode::kCounter:
            s.slot = slots[0];
            s.fixed_seed = rng_.Next();
            break;
          default:
            break;
        }
      }
      state_[t].push_back(std::move(s));
    }
  }
}

bool PhaseGen::Usable(int o, int t, int r, bool exclusive) const {
  const RegionState& s = state_[t][r];
  switch (s.mode) {
    case Mode::kIdle:
      return false;
    case Mode::kOwned:
      return s.owner == o;
    case Mode::kCounter:
      return exclusive;
    default:
      return true;
  }
}

TypedBuf PhaseGen::MakeBuf(int elem, int n_elems, bool write_side) {
  TypedBuf b;
  if (n_elems == 0 || rng_.Percent(45)) {
    b.count = n_elems;
    b.type = NamedType(elem);
    return b;
  }
  const std::vector<int> divs = Divisors(n_elems);
  for (int attempt = 0; attempt < 4; ++attempt) {
    const int count = rng_.Percent(60) ? 1 : rng_.Pick(divs);
    TypeRef t = RandomType(elem, n_elems / count, 4L * n_elems + 16, 2, rng_);
    if (t == nullptr) continue;
    if ((write_side || rng_.Percent(80)) && !Distinct(Footprint(*t, count))) {
      continue;
    }
    b.count = count;
    b.type = t;
    return b;
  }
  b.count = n_elems;
  b.type = NamedType(elem);
  return b;
}

// Chooses the target datatype and where it lands in the region: writes
// never name a slot twice, owned regions respect the owner's pending
// accesses, and target_disp is a whole number of disp units.
bool PhaseGen::PickTarget(Op& op, int n_elems, bool owned) {
  const Region& reg = Reg(op.region);
  const uint8_t access = AccessClass(op.kind);
  std::vector<uint8_t>& marks = state_[op.target][op.region].marks;
  for (int attempt = 0; attempt < 6; ++attempt) {
    TypedBuf tb;
    if (n_elems == 0 || attempt >= 4 || rng_.Percent(45)) {
      tb.count = n_elems;
      tb.type = NamedType(op.elem);
    } else {
      const std::vector<int> divs = Divisors(n_elems);
      tb.count = rng_.Percent(60) ? 1 : rng_.Pick(divs);
      tb.type = RandomType(op.elem, n_elems / tb.count, reg.count, 2, rng_);
      if (tb.type == nullptr) continue;
    }
    const std::vector<long> fp = Footprint(*tb.type, tb.count);
    if (access != kRead && !Distinct(fp)) continue;
    long lo = 0, hi = -1;
    if (!fp.empty()) {
      lo = *std::min_element(fp.begin(), fp.end());
      hi = *std::max_element(fp.begin(), fp.end());
    }
    const long bmin = -lo, bmax = reg.count - 1 - hi;
    if (bmin > bmax) continue;
    for (long b : AlignedSlots(op.target, op.region, bmin, bmax)) {
      bool ok = true;
      if (owned) {
        for (long s : fp) ok = ok && !Conflicts(marks[b + s], access);
      }
      if (!ok) continue;
      if (owned) {
        for (long s : fp) marks[b + s] |= access;
      }
      op.target_buf = tb;
      op.base_slot = b;
      op.disp = (reg.offset + b * Elem(op.elem).extent) / DispUnit(op.target);
      return true;
    }
  }
  return false;
}

int PhaseGen::AddOp(int o, const std::vector<int>& targets,
                    const std::set<int>& exclusive, bool passive) {
  RankPlan& plan = plans_[o];
  Op op;
  op.value_seed = rng_.Next();
  op.unit = unit_;

  // Now and then MPI_PROC_NULL: a valid target that moves nothing.
  if (rng_.Percent(2)) {
    op.kind = rng_.Pick(std::vector<OpKind>{OpKind::kPut, OpKind::kGet,
                                            OpKind::kAcc, OpKind::kGacc});
    op.target = MPI_PROC_NULL;
    op.elem = 4;  // MPI_INT
    op.origin = {2, NamedType(op.elem)};
    op.target_buf = {2, NamedType(op.elem)};
    op.result = {2, NamedType(op.elem)};
    op.op = MPI_SUM;
    op.record = Fetches(op.kind) ? Record::kOrdered : Record::kNone;
    op.note = "proc-null";
    op.id = (*next_id_)++;
    plan.ops.push_back(op);
    ++ops_;
    return static_cast<int>(plan.ops.size()) - 1;
  }

  std::vector<std::pair<int, int>> cands;
  for (int t : targets) {
    for (int r = 0; r < Regions(t); ++r) {
      if (Usable(o, t, r, exclusive.count(t) != 0)) cands.push_back({t, r});
    }
  }
  if (cands.empty()) return -1;
  // Contended regions (where atomicity and exclusion are at stake) get more
  // than their share.
  std::vector<std::pair<int, int>> hot;
  for (const auto& [ct, cr] : cands) {
    const Mode m = state_[ct][cr].mode;
    if (m == Mode::kShared || m == Mode::kTicket || m == Mode::kCasSame ||
        m == Mode::kCounter) {
      hot.push_back({ct, cr});
    }
  }
  const auto [t, r] = !hot.empty() && rng_.Percent(hot_pct_) ? rng_.Pick(hot)
                                                             : rng_.Pick(cands);
  RegionState& s = state_[t][r];
  const Region& reg = Reg(r);
  const ElemType& e = Elem(reg.elem);
  op.target = t;
  op.region = r;
  op.elem = reg.elem;
  op.note = ModeName(s.mode);
  const int p = passive ? 1 : 0;  // request-based kinds: passive target only
  std::vector<OpKind> kinds = {OpKind::kPut,   OpKind::kGet,  OpKind::kAcc,
                               OpKind::kGacc,  OpKind::kFop,  OpKind::kCas,
                               OpKind::kRput,  OpKind::kRget, OpKind::kRacc,
                               OpKind::kRgacc, OpKind::kRmw};
  std::vector<int> weights;
  switch (s.mode) {
    case Mode::kOwned:
      weights = {5,     5,     4,     3,     2, CompareSwapOk(e) ? 2 : 0,
                 2 * p, 2 * p, 2 * p, 2 * p, 0};
      break;
    case Mode::kShared:
      weights = {0, 0, 4, 2, 2, 0, 0, 0, 2 * p, 1 * p, 0};
      break;
    case Mode::kReadOnly:
      weights = {0, 4, 0, 1, 1, 0, 0, 2 * p, 0, 1 * p, 0};
      break;
    case Mode::kTicket:
      weights = {0, 0, 0, 2, 3, 0, 0, 0, 0, 1 * p, 0};
      break;
    case Mode::kCasSame:
      weights = {0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0};
      break;
    case Mode::kCounter:
      weights = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
      break;
    case Mode::kIdle:
      return -1;
  }
  if ((e.group & kPair) && options_.Excludes("fop_pairs")) weights[4] = 0;
  if (std::all_of(weights.begin(), weights.end(),
                  [](int x) { return x == 0; })) {
    return -1;
  }
  op.kind = kinds[rng_.Weighted(weights)];
  const bool owned = s.mode == Mode::kOwned;

  // The op, and the values its origin data are made for.
  std::vector<MPI_Op> owner_ops = AccumulateOps(e, false);
  switch (op.kind) {
    case OpKind::kAcc:
    case OpKind::kRacc:
      op.op = owned ? rng_.Pick(owner_ops) : s.op;
      break;
    case OpKind::kGacc:
    case OpKind::kRgacc:
    case OpKind::kFop:
      if (s.mode == Mode::kReadOnly) {
        op.op = MPI_NO_OP;
      } else if (s.mode == Mode::kTicket) {
        op.op = MPI_SUM;
      } else if (rng_.Percent(15)) {
        op.op = MPI_NO_OP;
      } else {
        op.op = owned ? rng_.Pick(owner_ops) : s.op;
      }
      break;
    default:
      break;
  }
  op.values = op.op == MPI_PROD ? Values::kProd : Values::kAny;

  // Single-element kinds sit on the mode's slot or any free aligned one.
  const bool single = op.kind == OpKind::kFop || op.kind == OpKind::kCas ||
                      op.kind == OpKind::kRmw || s.mode == Mode::kTicket;
  if (single) {
    op.origin = op.target_buf = op.result = {1, NamedType(op.elem)};
    if (owned) {
      bool placed = false;
      for (long b : AlignedSlots(t, r, 0, reg.count - 1)) {
        if (Conflicts(s.marks[b], kAccum)) continue;
        s.marks[b] |= kAccum;
        op.base_slot = b;
        placed = true;
        break;
      }
      if (!placed) return -1;
    } else {
      op.base_slot = s.slot;
    }
    op.disp = (reg.offset + op.base_slot * e.extent) / DispUnit(t);
  } else {
    int max_n = std::min(kMaxOpElements, reg.count);
    int n_elems;
    switch (rng_.Below(7)) {
      case 0:
      case 1:
      case 2:
        n_elems = rng_.Range(1, std::min(4, max_n));
        break;
      case 3:
      case 4:
        n_elems = rng_.Range(1, std::min(16, max_n));
        break;
      default:
        n_elems = rng_.Range(1, max_n);
        break;
    }
    if (rng_.Percent(2)) n_elems = 0;
    if (!PickTarget(op, n_elems, owned)) return -1;
    const bool origin_written =
        op.kind == OpKind::kGet || op.kind == OpKind::kRget;
    op.origin = MakeBuf(op.elem, n_elems, origin_written);
    if (op.kind == OpKind::kGacc || op.kind == OpKind::kRgacc) {
      op.result = MakeBuf(op.elem, n_elems, true);
      op.null_origin = op.op == MPI_NO_OP && rng_.Percent(20);
    }
  }

  if (op.kind == OpKind::kRmw) {
    op.rmw_read = rng_.Below(3);
    op.rmw_write = rng_.Below(3);
    op.delta = rng_.Range(1, 9);
    ResetMarks(t);  // it flushes the target twice
  }
  if (s.mode == Mode::kTicket || s.mode == Mode::kCasSame) {
    op.value_seed = s.fixed_seed;  // every origin applies the same value
  }
  switch (s.mode) {
    case Mode::kOwned:
    case Mode::kReadOnly:
      op.record = Fetches(op.kind) ? Record::kOrdered : Record::kNone;
      break;
    case Mode::kTicket:
    case Mode::kCasSame:
      op.record = Record::kMultiset;
      break;
    default:
      op.record = Record::kNone;
      break;
  }
  // Now and then the origin at MPI_BOTTOM (origin buffers of ops that
  // move typed data; not single-element kinds, not a NULL origin).
  if (!single && !op.null_origin && op.kind != OpKind::kRmw &&
      rng_.Percent(8)) {
    op.bottom = true;
  }
  if (IsRequestKind(op.kind)) {
    op.request = plan.requests++;
    outstanding_.push_back(op.request);
  }
  if (Updates(op.kind) && !(op.kind != OpKind::kRmw && op.op == MPI_NO_OP)) {
    updated_[t] = true;
  }
  op.id = (*next_id_)++;
  plan.ops.push_back(op);
  ++ops_;
  return static_cast<int>(plan.ops.size()) - 1;
}

}  // namespace gen

namespace {

using namespace gen;  // NOLINT: the generator's own helpers

}  // namespace

const char* OpKindName(OpKind k) {
  switch (k) {
    case OpKind::kPut:
      return "put";
    case OpKind::kGet:
      return "get";
    case OpKind::kAcc:
      return "accumulate";
    case OpKind::kGacc:
      return "get_accumulate";
    case OpKind::kFop:
      return "fetch_and_op";
    case OpKind::kCas:
      return "compare_and_swap";
    case OpKind::kRput:
      return "rput";
    case OpKind::kRget:
      return "rget";
    case OpKind::kRacc:
      return "raccumulate";
    case OpKind::kRgacc:
      return "rget_accumulate";
    case OpKind::kRmw:
      return "counter-rmw";
  }
  return "?";
}

Program Generate(const GenOptions& options, const Layout& layout) {
  Program prog;
  prog.seed = options.seed;
  prog.layout = layout;
  prog.excluded = options.exclude;
  Rng rng(Mix(options.seed, 0x70726f67));
  // Mostly 1-3 windows; now and then many alive at once.
  const int nwindows = rng.Percent(10) ? rng.Range(4, 9) : rng.Range(1, 3);
  for (int i = 0; i < nwindows; ++i)
    prog.windows.push_back(MakeWindow(layout, rng));
  const int budget = options.ops > 0 ? options.ops : rng.Range(30, 160);
  int next_id = 0;
  while (prog.total_ops < budget && prog.phases.size() < 200) {
    Phase phase;
    phase.index = static_cast<int>(prog.phases.size());
    phase.window = rng.Below(nwindows);
    phase.kind = static_cast<PhaseKind>(rng.Weighted({3, 2, 5}));
    // Now and then a storm: many operations, mostly on contended regions.
    const bool storm = rng.Percent(12);
    phase.label = storm ? "storm" : "";
    const int max_ops = storm ? rng.Range(10, 30) : rng.Range(1, 6);
    const WindowSpec& w = prog.windows[phase.window];
    phase.plans.resize(w.groups.size());
    for (size_t g = 0; g < w.groups.size(); ++g) {
      PhaseGen gen(options, w, w.groups[g],
                   Rng(Mix(options.seed, 1000 + phase.index, g)), &next_id,
                   &phase.plans[g], max_ops, storm ? 85 : 35);
      switch (phase.kind) {
        case PhaseKind::kFence:
          gen.Fence();
          break;
        case PhaseKind::kPscw:
          gen.Pscw();
          break;
        case PhaseKind::kPassive:
          gen.Passive();
          break;
      }
      prog.total_ops += gen.ops();
    }
    prog.phases.push_back(std::move(phase));
  }
  return prog;
}

}  // namespace rma_fuzz
