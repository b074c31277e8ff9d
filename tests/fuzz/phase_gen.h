// The generator's phase state, shared by generate.cc (operations, modes,
// targets) and generate_sync.cc (the synchronization around them): the
// validity rules are argued in generate.cc.
#ifndef RMASHIM_TESTS_FUZZ_PHASE_GEN_H_
#define RMASHIM_TESTS_FUZZ_PHASE_GEN_H_

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include "tests/fuzz/program.h"

namespace rma_fuzz {
namespace gen {

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

inline const char* ModeName(Mode m) {
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

inline std::vector<int> Divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i) {
    if (n % i == 0) d.push_back(i);
  }
  return d;
}

inline bool IsRequestKind(OpKind k) {
  return k == OpKind::kRput || k == OpKind::kRget || k == OpKind::kRacc ||
         k == OpKind::kRgacc;
}

inline bool Fetches(OpKind k) {
  return k == OpKind::kGet || k == OpKind::kRget || k == OpKind::kGacc ||
         k == OpKind::kRgacc || k == OpKind::kFop || k == OpKind::kCas;
}

// Kinds that update target memory (for MPI_MODE_NOPUT).
inline bool Updates(OpKind k) {
  return k != OpKind::kGet && k != OpKind::kRget;
}

inline uint8_t AccessClass(OpKind k) {
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

inline bool Conflicts(uint8_t pending, uint8_t access) {
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

// A window for the program (window_gen.cc).
WindowSpec MakeWindow(const Layout& layout, Rng& rng);

}  // namespace gen
}  // namespace rma_fuzz

#endif  // RMASHIM_TESTS_FUZZ_PHASE_GEN_H_
