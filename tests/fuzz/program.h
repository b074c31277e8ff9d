// A random RMA program: windows, and phases that each run one kind of
// synchronization on one window. Every rank generates the same program from
// the seed (and the node layout, learnt once at start-up), then executes
// its own part. Phases are separated by MPI_Barrier on MPI_COMM_WORLD, so
// the access rules of one phase never depend on another.
#ifndef RMASHIM_TESTS_FUZZ_PROGRAM_H_
#define RMASHIM_TESTS_FUZZ_PROGRAM_H_

#include <mpi.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tests/fuzz/elements.h"
#include "tests/fuzz/types.h"

namespace rma_fuzz {

enum class Flavor { kAllocate, kShared, kCreate, kDynamic };
enum class CommKind { kWorld, kWorldReversed, kNode, kNodeReversed };

// A run of elements of one predefined type at a fixed place in every rank's
// window memory.
struct Region {
  int elem = 0;
  MPI_Aint offset = 0;  // bytes, 16-aligned
  int count = 0;        // elements
};

struct WindowSpec {
  Flavor flavor = Flavor::kAllocate;
  CommKind comm = CommKind::kWorld;
  bool noncontig = false;  // alloc_shared_noncontig
  // Passive-target epochs lock with MPI_MODE_NOCHECK (lock_all, or one
  // locker per target), or this window never uses it.
  bool nocheck_locks = false;
  std::vector<Region> regions;
  // Per world rank: window size in bytes, disp_unit, regions that fit.
  std::vector<MPI_Aint> bytes;
  std::vector<int> disp_unit;
  std::vector<int> regions_on;
  // One communicator instance per entry (several for node communicators):
  // its world ranks in window-rank order.
  std::vector<std::vector<int>> groups;
};

enum class OpKind {
  kPut,
  kGet,
  kAcc,
  kGacc,
  kFop,
  kCas,
  kRput,
  kRget,
  kRacc,
  kRgacc,
  kRmw,  // counter: read, flush, write back plus delta (exclusive lock)
};

// What becomes of an operation's fetched data.
enum class Record {
  kNone,      // depends on the order of concurrent accumulates: not kept
  kOrdered,   // deterministic: digested in this rank's order
  kMultiset,  // tickets: the multiset over all ranks is deterministic
};

struct TypedBuf {
  int count = 0;
  TypeRef type;
};

struct Op {
  int id = 0;  // global, for --drop-ops
  OpKind kind = OpKind::kPut;
  int target = 0;  // window rank
  int region = 0;
  int elem = 0;
  long base_slot = 0;  // element index in the region where the type map starts
  MPI_Aint disp = 0;   // target_disp in the target's disp units
  TypedBuf origin, target_buf, result;
  MPI_Op op = MPI_OP_NULL;
  Values values = Values::kAny;
  Record record = Record::kNone;
  bool null_origin = false;  // MPI_NO_OP get_accumulate with origin NULL
  // The origin buffer passed as MPI_BOTTOM with a datatype of absolute
  // addresses (one hindexed block at the buffer), as ARMCI-MPI does.
  bool bottom = false;
  uint64_t value_seed = 0;  // origin data (and cas compare) come from it
  int request = -1;         // request slot (request-based kinds)
  // kRmw: how to read and write, and what to add.
  int rmw_read = 0, rmw_write = 0, delta = 0;
  // Multiset key: unit (sub-epoch) of the phase, and the element slot.
  int unit = 0;
  const char* note = "";  // region mode, for the listing
};

enum class Act {
  kOp,
  kFence,
  kPost,
  kStart,
  kComplete,
  kWait,
  kTestLoop,
  kCommBarrier,
  kLock,
  kUnlock,
  kLockAll,
  kUnlockAll,
  kFlush,
  kFlushLocal,
  kFlushAll,
  kFlushLocalAll,
  kSync,
  kWaitRequests,
};

enum class WaitMethod {
  kWaitEach,
  kWaitall,
  kTestLoop,
  kWaitany,
  kWaitsome,
  kTestall
};

struct Action {
  Act act = Act::kOp;
  int op = -1;  // kOp: index into RankPlan::ops
  int target = 0;
  int lock_type = 0;
  int assert_ = 0;
  std::vector<int> group;     // kPost/kStart: window ranks
  std::vector<int> requests;  // kWaitRequests: request slots
  WaitMethod method = WaitMethod::kWaitEach;
};

struct RankPlan {
  std::vector<Action> actions;
  std::vector<Op> ops;
  int requests = 0;  // request slots used
};

enum class PhaseKind { kFence, kPscw, kPassive };

struct Phase {
  int index = 0;
  int window = 0;
  PhaseKind kind = PhaseKind::kFence;
  std::string label;
  // plans[group][window rank]
  std::vector<std::vector<RankPlan>> plans;
};

struct Layout {
  int size = 0;
  std::vector<int> node_of;  // node index of each world rank
  int nodes = 0;
};

struct Program {
  uint64_t seed = 0;
  Layout layout;
  std::vector<WindowSpec> windows;
  std::vector<Phase> phases;
  int total_ops = 0;
  std::set<std::string> excluded;
};

// Generation knobs.
struct GenOptions {
  uint64_t seed = 1;
  int ops = 0;  // approximate total; 0: drawn from the seed
  // Features left out, to look past a known bug: "win_test" (PSCW targets
  // use MPI_Win_wait, never MPI_Win_test loops), "fop_pairs" (no
  // MPI_Fetch_and_op on MINLOC/MAXLOC pair types).
  std::set<std::string> exclude;
  bool Excludes(const char* feature) const {
    return exclude.count(feature) != 0;
  }
};

Program Generate(const GenOptions& options, const Layout& layout);

// Which parts of a generated program run (minimization).
struct Filter {
  std::set<int> keep_phases;  // empty: all
  std::set<int> drop_ops;
  bool Keeps(const Phase& p) const {
    return keep_phases.empty() || keep_phases.count(p.index) != 0;
  }
  bool Keeps(const Op& op) const { return drop_ops.count(op.id) == 0; }
};

// Human-readable listing of what runs.
std::string Listing(const Program& program, const Filter& filter);

const char* OpKindName(OpKind k);

}  // namespace rma_fuzz

#endif  // RMASHIM_TESTS_FUZZ_PROGRAM_H_
