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

#include "tests/fuzz/program.h"

namespace rma_fuzz {
namespace {

constexpr int kMaxOpElements = 48;

enum class Mode {
  kIdle,
  kOwned,
  kShared,
  kReadOnly,
  kTicket,
  kCasSame,
  kCounter
};

const char* ModeName(Mode m) {
  switch (m) {
    case Mode::kIdle:
      return "idle";
    case Mode::kOwned:
      return "owned";
    case Mode::kShared:
      return "shared-acc";
    case Mode::kReadOnly:
      return "read-only";
    case Mode::kTicket:
      return "ticket";
    case Mode::kCasSame:
      return "cas-same";
    case Mode::kCounter:
      return "counter";
  }
  return "?";
}

// What an owner's pending (not yet flushed) accesses did to a slot.
enum : uint8_t { kRead = 1, kWrite = 2, kAccum = 4 };

struct RegionState {
  Mode mode = Mode::kIdle;
  int owner = -1;
  MPI_Op op = MPI_OP_NULL;  // kShared
  long slot = 0;            // kTicket, kCasSame, kCounter
  uint64_t fixed_seed = 0;  // kTicket, kCasSame: the value every origin uses
  std::vector<uint8_t> marks;
};

std::vector<int> Divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i) {
    if (n % i == 0) d.push_back(i);
  }
  return d;
}

bool IsRequestKind(OpKind k) {
  return k == OpKind::kRput || k == OpKind::kRget || k == OpKind::kRacc ||
         k == OpKind::kRgacc;
}

bool Fetches(OpKind k) {
  return k == OpKind::kGet || k == OpKind::kRget || k == OpKind::kGacc ||
         k == OpKind::kRgacc || k == OpKind::kFop || k == OpKind::kCas;
}

// Kinds that update target memory (for MPI_MODE_NOPUT).
bool Updates(OpKind k) { return k != OpKind::kGet && k != OpKind::kRget; }

uint8_t AccessClass(OpKind k) {
  switch (k) {
    case OpKind::kPut:
    case OpKind::kRput:
      return kWrite;
    case OpKind::kGet:
    case OpKind::kRget:
      return kRead;
    default:
      return kAccum;
  }
}

bool Conflicts(uint8_t pending, uint8_t access) {
  switch (access) {
    case kWrite:
      return pending != 0;
    case kRead:
      return (pending & (kWrite | kAccum)) != 0;
    default:
      return (pending & (kRead | kWrite)) != 0;
  }
}

struct LockReq {
  int target;
  int type;
  int assert_;
};

struct Session {
  bool all = false;
  int all_assert = 0;
  std::vector<LockReq> locks;  // increasing target order
};

// Generates one phase for one communicator instance of its window.
class PhaseGen {
 public:
  PhaseGen(const GenOptions& options, const WindowSpec& w,
           const std::vector<int>& world, Rng rng, int* next_id,
           std::vector<RankPlan>* plans, int max_ops, int hot_pct)
      : options_(options),
        w_(w),
        world_(world),
        rng_(rng),
        next_id_(next_id),
        plans_(*plans),
        max_ops_(max_ops),
        hot_pct_(hot_pct) {
    plans_.assign(world.size(), RankPlan{});
  }

  void Fence();
  void Pscw();
  void Passive();
  int ops() const { return ops_; }

 private:
  int n() const { return static_cast<int>(world_.size()); }
  int Regions(int t) const { return w_.regions_on[world_[t]]; }
  const Region& Reg(int r) const { return w_.regions[r]; }
  int DispUnit(int t) const { return w_.disp_unit[world_[t]]; }
  bool SlotAligned(int t, int r, long slot) const {
    return (Reg(r).offset + slot * Elem(Reg(r).elem).extent) % DispUnit(t) == 0;
  }
  // Aligned slots of a region on a target, in random order.
  std::vector<long> AlignedSlots(int t, int r, long lo, long hi) {
    std::vector<long> slots;
    for (long b = lo; b <= hi; ++b) {
      // target_disp is never negative (MPI_ERR_DISP).
      if (SlotAligned(t, r, b) &&
          Reg(r).offset + b * Elem(Reg(r).elem).extent >= 0) {
        slots.push_back(b);
      }
    }
    rng_.Shuffle(slots);
    return slots;
  }

  void AssignModes(const std::vector<std::set<int>>& access,
                   const std::vector<std::set<int>>& exclusive);
  bool Usable(int o, int t, int r, bool exclusive) const;
  // Adds one operation of origin `o` on one of `targets` to its plan (not
  // to its actions); returns its index or -1.
  int AddOp(int o, const std::vector<int>& targets,
            const std::set<int>& exclusive, bool passive);
  bool PickTarget(Op& op, int n_elems, bool owned);
  TypedBuf MakeBuf(int elem, int n_elems, bool write_side);
  void ResetMarks(int t) {
    for (RegionState& s : state_[t])
      std::fill(s.marks.begin(), s.marks.end(), 0);
  }
  void ResetAllMarks() {
    for (int t = 0; t < n(); ++t) ResetMarks(t);
  }
  std::vector<int> AllRanks() const {
    std::vector<int> v(n());
    for (int i = 0; i < n(); ++i) v[i] = i;
    return v;
  }
  void PushOp(int o, int index) {
    Action a;
    a.act = Act::kOp;
    a.op = index;
    plans_[o].actions.push_back(a);
  }
  void Push(int o, Act act, int target = 0, int assert_ = 0) {
    Action a;
    a.act = act;
    a.target = target;
    a.assert_ = assert_;
    plans_[o].actions.push_back(a);
  }
  void WaitRequests(int o, std::vector<int>* outstanding, bool all);
  void RunSession(int o, const Session& s);

  const GenOptions& options_;
  const WindowSpec& w_;
  const std::vector<int>& world_;
  Rng rng_;
  int* next_id_;
  std::vector<RankPlan>& plans_;
  int max_ops_;
  int hot_pct_;  // how often an op goes to a contended region
  int ops_ = 0;
  int unit_ = 0;
  std::vector<std::vector<RegionState>> state_;  // [target][region]
  std::vector<bool> updated_;  // per target: put/accumulate in this unit
  std::vector<int> outstanding_;
};

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

void PhaseGen::WaitRequests(int o, std::vector<int>* outstanding, bool all) {
  if (outstanding->empty()) return;
  Action a;
  a.act = Act::kWaitRequests;
  a.method = static_cast<WaitMethod>(rng_.Below(6));
  rng_.Shuffle(*outstanding);
  const size_t take =
      all ? outstanding->size()
          : 1 + rng_.Below(static_cast<int>(outstanding->size()));
  a.requests.assign(outstanding->begin(), outstanding->begin() + take);
  outstanding->erase(outstanding->begin(), outstanding->begin() + take);
  plans_[o].actions.push_back(a);
}

void PhaseGen::Fence() {
  const int units = rng_.Range(1, 3);
  const bool noprecede = rng_.Percent(50);
  const bool nosucceed = rng_.Percent(70);
  for (unit_ = 0; unit_ < units; ++unit_) {
    std::vector<std::set<int>> access(n());
    std::vector<bool> active(n());
    for (int o = 0; o < n(); ++o) {
      active[o] = rng_.Percent(85);
      if (!active[o]) continue;
      for (int t = 0; t < n(); ++t) access[t].insert(o);
    }
    AssignModes(access, std::vector<std::set<int>>(n()));
    std::vector<std::vector<int>> ops(n());
    for (int o = 0; o < n(); ++o) {
      if (!active[o]) continue;
      const int m = rng_.Range(0, max_ops_);
      for (int i = 0; i < m; ++i) {
        const int index = AddOp(o, AllRanks(), {}, false);
        if (index >= 0) ops[o].push_back(index);
      }
    }
    for (int r = 0; r < n(); ++r) {
      int assert_ = 0;
      if (unit_ == 0 && noprecede) assert_ |= MPI_MODE_NOPRECEDE;
      if (rng_.Percent(30)) assert_ |= MPI_MODE_NOSTORE;
      if (!updated_[r] && rng_.Percent(60)) assert_ |= MPI_MODE_NOPUT;
      Push(r, Act::kFence, 0, assert_);
      for (int index : ops[r]) PushOp(r, index);
    }
  }
  for (int r = 0; r < n(); ++r) {
    int assert_ = nosucceed ? MPI_MODE_NOSUCCEED : 0;
    if (rng_.Percent(30)) assert_ |= MPI_MODE_NOSTORE;
    Push(r, Act::kFence, 0, assert_);
  }
}

void PhaseGen::Pscw() {
  unit_ = 0;
  const bool nocheck = rng_.Percent(25);
  std::vector<std::vector<int>> access_group(n());
  std::vector<std::set<int>> exposure(n());
  for (int o = 0; o < n(); ++o) {
    if (!rng_.Percent(80)) continue;
    for (int t = 0; t < n(); ++t) {
      if (rng_.Percent(t == o ? 35 : 60)) {
        access_group[o].push_back(t);
        exposure[t].insert(o);
      }
    }
  }
  AssignModes(exposure, std::vector<std::set<int>>(n()));
  std::vector<std::vector<int>> ops(n());
  for (int o = 0; o < n(); ++o) {
    if (access_group[o].empty()) continue;
    const int m = rng_.Range(0, max_ops_);
    for (int i = 0; i < m; ++i) {
      const int index = AddOp(o, access_group[o], {}, false);
      if (index >= 0) ops[o].push_back(index);
    }
  }
  for (int r = 0; r < n(); ++r) {
    if (!exposure[r].empty()) {
      Action post;
      post.act = Act::kPost;
      post.group.assign(exposure[r].begin(), exposure[r].end());
      rng_.Shuffle(post.group);
      if (nocheck) post.assert_ |= MPI_MODE_NOCHECK;
      if (rng_.Percent(30)) post.assert_ |= MPI_MODE_NOSTORE;
      if (!updated_[r] && rng_.Percent(60)) post.assert_ |= MPI_MODE_NOPUT;
      plans_[r].actions.push_back(post);
    }
    // NOCHECK: every post has returned before any start is called.
    if (nocheck) Push(r, Act::kCommBarrier);
    if (!access_group[r].empty()) {
      Action start;
      start.act = Act::kStart;
      start.group = access_group[r];
      rng_.Shuffle(start.group);
      if (nocheck) start.assert_ = MPI_MODE_NOCHECK;
      plans_[r].actions.push_back(start);
      for (int index : ops[r]) PushOp(r, index);
      Push(r, Act::kComplete);
    }
    if (!exposure[r].empty()) {
      const bool test_loop = rng_.Percent(30) && !options_.Excludes("win_test");
      Push(r, test_loop ? Act::kTestLoop : Act::kWait);
    }
  }
}

void PhaseGen::RunSession(int o, const Session& s) {
  outstanding_.clear();
  std::vector<int> locked;
  std::set<int> exclusive;
  auto ops_burst = [&](int max) {
    const int m = rng_.Range(0, max);
    for (int i = 0; i < m && !locked.empty(); ++i) {
      const int index = AddOp(o, locked, exclusive, true);
      if (index < 0) continue;
      PushOp(o, index);
      const Op& op = plans_[o].ops[index];
      if (op.kind == OpKind::kRmw) continue;
      const int t = rng_.Pick(locked);
      switch (rng_.Weighted({70, 10, 5, 5, 4, 3, 8})) {
        case 1:
          Push(o, Act::kFlush, t);
          ResetMarks(t);
          break;
        case 2:
          Push(o, Act::kFlushLocal, t);
          break;
        case 3:
          Push(o, Act::kFlushAll);
          ResetAllMarks();
          break;
        case 4:
          Push(o, Act::kFlushLocalAll);
          break;
        case 5:
          Push(o, Act::kSync);
          break;
        case 6:
          WaitRequests(o, &outstanding_, false);
          break;
        default:
          break;
      }
    }
  };
  if (s.all) {
    Push(o, Act::kLockAll, 0, s.all_assert);
    locked = AllRanks();
    ops_burst(max_ops_);
    WaitRequests(o, &outstanding_, true);
    Push(o, Act::kUnlockAll);
    ResetAllMarks();
    return;
  }
  const bool interleave = rng_.Percent(40);
  for (const LockReq& l : s.locks) {
    Action a;
    a.act = Act::kLock;
    a.target = l.target;
    a.lock_type = l.type;
    a.assert_ = l.assert_;
    plans_[o].actions.push_back(a);
    locked.push_back(l.target);
    if (l.type == MPI_LOCK_EXCLUSIVE) exclusive.insert(l.target);
    if (interleave) ops_burst(std::max(1, max_ops_ / 2));
  }
  if (!interleave) ops_burst(max_ops_);
  WaitRequests(o, &outstanding_, true);
  std::vector<int> order = locked;
  rng_.Shuffle(order);
  for (int t : order) {
    Push(o, Act::kUnlock, t);
    ResetMarks(t);
  }
}

void PhaseGen::Passive() {
  unit_ = 0;
  enum { kAll, kLocks, kMixed, kSolo };
  // MPICH 4.0.2 loses track of a target's lock state once NOCHECK and
  // regular locks meet on a window (a later lock or lock_all hangs, see
  // tests/fuzz/README.md), so a window uses MPI_MODE_NOCHECK for all its
  // passive-target epochs (lock_all, or one locker per target) or never.
  const bool nocheck = w_.nocheck_locks;
  const int kind =
      nocheck ? rng_.Weighted({1, 0, 0, 1}) : rng_.Weighted({3, 4, 3, 2});
  std::vector<std::vector<Session>> sessions(n());
  std::vector<bool> excl_ok(n());
  for (int t = 0; t < n(); ++t) excl_ok[t] = rng_.Percent(60);
  std::vector<int> solo_owner(n(), -1);
  for (int t = 0; t < n(); ++t) {
    if (rng_.Percent(80)) solo_owner[t] = rng_.Below(n());
  }
  auto lock_set = [&] {
    Session s;
    for (int t = 0; t < n(); ++t) {
      if (!rng_.Percent(50)) continue;
      LockReq l{t, MPI_LOCK_SHARED, 0};
      if (kind == kMixed) {
        l.type = rng_.Percent(50) ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED;
        if (l.type == MPI_LOCK_EXCLUSIVE) {
          // MPICH acquires lock_all's per-target locks in no fixed order, so
          // it may hold B while waiting for A; an origin holding A
          // exclusively must not then wait for B. One lock per session.
          s.locks = {l};
          break;
        }
      } else if (excl_ok[t] && rng_.Percent(50)) {
        l.type = MPI_LOCK_EXCLUSIVE;
      }
      s.locks.push_back(l);
    }
    return s;
  };
  for (int o = 0; o < n(); ++o) {
    if (kind == kSolo) {
      Session s;
      for (int t = 0; t < n(); ++t) {
        if (solo_owner[t] != o) continue;
        s.locks.push_back(
            {t, rng_.Percent(50) ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED,
             nocheck ? MPI_MODE_NOCHECK : 0});
      }
      if (!s.locks.empty()) sessions[o].push_back(s);
      continue;
    }
    const int count = rng_.Weighted({1, 6, 3});
    for (int i = 0; i < count; ++i) {
      Session s;
      if (kind == kAll || (kind == kMixed && rng_.Percent(40))) {
        s.all = true;
        // No exclusive lock in an all-lock_all phase.
        if (nocheck) s.all_assert = MPI_MODE_NOCHECK;
      } else {
        s = lock_set();
        if (s.locks.empty()) continue;
      }
      sessions[o].push_back(s);
    }
  }
  std::vector<std::set<int>> access(n()), exclusive(n());
  for (int o = 0; o < n(); ++o) {
    for (const Session& s : sessions[o]) {
      if (s.all) {
        for (int t = 0; t < n(); ++t) access[t].insert(o);
      }
      for (const LockReq& l : s.locks) {
        access[l.target].insert(o);
        if (l.type == MPI_LOCK_EXCLUSIVE) exclusive[l.target].insert(o);
      }
    }
  }
  AssignModes(access, exclusive);
  for (int o = 0; o < n(); ++o) {
    for (const Session& s : sessions[o]) RunSession(o, s);
  }
}

std::vector<int> NodeRanks(const Layout& layout, int node, bool reversed) {
  std::vector<int> ranks;
  for (int r = 0; r < layout.size; ++r) {
    if (layout.node_of[r] == node) ranks.push_back(r);
  }
  if (reversed) std::reverse(ranks.begin(), ranks.end());
  return ranks;
}

MPI_Aint Align16(MPI_Aint x) { return (x + 15) / 16 * 16; }

WindowSpec MakeWindow(const Layout& layout, Rng& rng) {
  WindowSpec w;
  w.flavor = static_cast<Flavor>(rng.Weighted({5, 3, 3, 2}));
  const bool reversed = rng.Percent(30);
  if (w.flavor == Flavor::kShared) {
    w.comm = reversed ? CommKind::kNodeReversed : CommKind::kNode;
    w.noncontig = rng.Percent(40);
    for (int node = 0; node < layout.nodes; ++node) {
      w.groups.push_back(NodeRanks(layout, node, reversed));
    }
  } else {
    w.comm = reversed ? CommKind::kWorldReversed : CommKind::kWorld;
    std::vector<int> all(layout.size);
    for (int r = 0; r < layout.size; ++r)
      all[r] = reversed ? layout.size - 1 - r : r;
    w.groups.push_back(all);
  }
  std::vector<int> weights;
  for (const ElemType& e : ElemTypes()) weights.push_back(e.weight);
  const int nregions = rng.Range(1, 6);
  MPI_Aint at = 0;
  std::vector<MPI_Aint> ends;
  for (int i = 0; i < nregions; ++i) {
    Region r;
    r.elem = rng.Weighted(weights);
    const int ext = Elem(r.elem).extent;
    switch (rng.Weighted({6, 3, 1})) {
      case 0:
        r.count = rng.Range(1, 16);
        break;
      case 1:
        r.count = rng.Range(17, 64);
        break;
      default:  // crosses 4 KiB pages (the shim's accumulate stripes)
        r.count = std::max(1, rng.Range(4096, 9000) / ext);
        break;
    }
    if (rng.Percent(20)) at += 16;
    r.offset = at;
    at = Align16(at + static_cast<MPI_Aint>(r.count) * ext);
    ends.push_back(at);
    w.regions.push_back(r);
  }
  w.nocheck_locks = rng.Percent(25);
  const int uniform_du = rng.Pick(std::vector<int>{1, 4, 8});
  const bool per_rank_du = rng.Percent(25);
  const bool per_rank_size = rng.Percent(25);
  const bool odd_sizes = rng.Percent(15);
  for (int r = 0; r < layout.size; ++r) {
    int du = per_rank_du ? rng.Pick(std::vector<int>{1, 4, 8}) : uniform_du;
    if (w.flavor == Flavor::kDynamic) du = 1;  // dynamic windows address bytes
    w.disp_unit.push_back(du);
    int fit = nregions;
    if (per_rank_size && rng.Percent(50)) fit = rng.Range(0, nregions);
    w.regions_on.push_back(fit);
    // Now and then a size that is no multiple of 16: a tail no operation
    // touches (MPICH 4.0.2 misplaces data in such MPI_Win_allocate
    // windows; the model says where it belongs).
    const MPI_Aint tail = odd_sizes ? rng.Range(1, 15) : 0;
    w.bytes.push_back(fit == 0 ? 0 : ends[fit - 1] + tail);
  }
  return w;
}

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
