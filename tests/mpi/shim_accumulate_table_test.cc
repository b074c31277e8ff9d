// The accumulate family's op x type table: every origin applies every
// (predefined type, predefined op) pair MPI defines with MPI_Accumulate,
// MPI_Get_accumulate, MPI_Fetch_and_op and MPI_Compare_and_swap, in
// lock_all, shared-lock, exclusive-lock and fence epochs. Table entries run
// on a managed window and on a native (opt-out) window in the same program;
// both must match the serial reference (tests/mpi/shim_accumulate_util.h), and
// each other. A suite of its own: the table is the family's broadest check.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tests/mpi/shim_accumulate_util.h"
#include "tests/mpi_test_util.h"

namespace rmashim_test::accumulate {
namespace {

// ---- The op x type table.

constexpr int kElems = 4;  // elements per block

struct Entry {
  const TypeCase* type;
  const OpCase* op;
  int target;
  MPI_Aint offset;  // of the entry's region in the target window
  bool cas;
};

// Region of an entry: the shared block, then one own block per origin.
MPI_Aint RegionBytes(const TypeCase& type, int size) {
  return (MPI_Aint{1} + size) * kElems * type.extent;
}

// Types MPI allows in MPI_Compare_and_swap that the MPI library in use
// refuses (MPICH 5.0.1: MPI_LOGICAL), found by AccumulateTableTest's set-up
// on its native window: the table leaves their compare-and-swap out.
std::vector<MPI_Datatype>& CasRefused() {
  static std::vector<MPI_Datatype> refused;
  return refused;
}

bool CasRefusedFor(MPI_Datatype type) {
  const std::vector<MPI_Datatype>& refused = CasRefused();
  return std::find(refused.begin(), refused.end(), type) != refused.end();
}

// Tries MPI_Compare_and_swap on every type MPI allows on this rank's own
// memory of `win` (a native window), writing nothing (origin equals
// compare, the value is left as it was), and records those refused.
void FindCasRefused(MPI_Win win) {
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, Rank(), 0, win);
  for (const TypeCase& type : Types()) {
    if (!(type.group & kCasGroups)) continue;
    std::byte value[32] = {}, result[32] = {};
    if (MPI_Compare_and_swap(value, value, result, type.type, Rank(), 0, win) !=
        MPI_SUCCESS) {
      CasRefused().push_back(type.type);
    }
    MPI_Win_flush(Rank(), win);
  }
  MPI_Win_unlock(Rank(), win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
}

std::vector<Entry> TableEntries(int size, MPI_Aint* window_bytes) {
  std::vector<Entry> entries;
  std::vector<MPI_Aint> used(size, 0);
  for (const TypeCase& type : Types()) {
    for (const OpCase& op : kOps) {
      if (!(type.group & op.groups)) continue;
      const int target = static_cast<int>(entries.size()) % size;
      const bool cas = op.op == MPI_REPLACE && (type.group & kCasGroups) &&
                       !CasRefusedFor(type.type);
      entries.push_back({&type, &op, target, used[target], cas});
      used[target] += (RegionBytes(type, size) + 63) / 64 * 64;
    }
  }
  *window_bytes = *std::max_element(used.begin(), used.end());
  return entries;
}

// What one origin handed to and got back from one entry.
struct OriginSide {
  std::vector<std::byte> acc, ga, fop;
  std::vector<std::byte> ga_result, fop_result, cas_result;
  std::vector<std::byte> cas_new, cas_compare;
};

// The compare-and-swaps go on own block element kElems-1, right after the
// get_accumulate(MPI_REPLACE) wrote `ga` there: the first swaps in a value
// that differs in its lowest bit, the second compares against the old value
// and must fail.
void MakeCasValues(const Entry& e, OriginSide& s) {
  const int x = e.type->extent;
  s.cas_compare.assign(s.ga.end() - x, s.ga.end());
  s.cas_new = s.cas_compare;
  s.cas_new[0] ^= std::byte{1};
}

OriginSide MakeOriginSide(const Entry& e, int entry, int rank) {
  OriginSide s;
  const TypeCase& t = *e.type;
  s.acc = Values(t, e.op->op, rank, entry, kAccValue, kElems);
  s.ga = Values(t, e.op->op, rank, entry, kGaValue, kElems);
  s.fop = Values(t, e.op->op, rank, entry, kFopValue, 1);
  s.ga_result.assign(kElems * t.extent, std::byte{0xee});
  s.fop_result.assign(t.extent, std::byte{0xee});
  s.cas_result.assign(2 * t.extent, std::byte{0xee});
  if (e.cas) MakeCasValues(e, s);
  return s;
}

void InitRegion(const Entry& e, int entry, int size, std::byte* region) {
  const TypeCase& t = *e.type;
  const auto shared = Values(t, e.op->op, e.target, entry, kSharedInit, kElems);
  std::memcpy(region, shared.data(), shared.size());
  for (int o = 0; o < size; ++o) {
    const auto own =
        Values(t, e.op->op, e.target, entry, kOwnInit, kElems, o + 1);
    std::memcpy(region + (1 + o) * own.size(), own.data(), own.size());
  }
}

// Issues one origin's operations of an entry.
void IssueEntry(MPI_Win win, const Entry& e, int rank, OriginSide& s) {
  const TypeCase& t = *e.type;
  const MPI_Op op = e.op->op;
  const MPI_Aint own = e.offset + (1 + rank) * kElems * t.extent;
  const std::string where = std::string(t.name) + " " + e.op->name;
  if (op == MPI_NO_OP) {
    // Atomic reads of the untouched shared block.
    EXPECT_EQ(MPI_Get_accumulate(s.acc.data(), kElems, t.type,
                                 s.ga_result.data(), kElems, t.type, e.target,
                                 e.offset, kElems, t.type, op, win),
              MPI_SUCCESS)
        << where;
    EXPECT_EQ(MPI_Fetch_and_op(s.fop.data(), s.fop_result.data(), t.type,
                               e.target, e.offset + t.extent, op, win),
              MPI_SUCCESS)
        << where;
    return;
  }
  if (op != MPI_REPLACE) {  // REPLACE on a shared block is order-dependent
    EXPECT_EQ(MPI_Accumulate(s.acc.data(), kElems, t.type, e.target, e.offset,
                             kElems, t.type, op, win),
              MPI_SUCCESS)
        << where;
  }
  EXPECT_EQ(MPI_Get_accumulate(s.ga.data(), kElems, t.type, s.ga_result.data(),
                               kElems, t.type, e.target, own, kElems, t.type,
                               op, win),
            MPI_SUCCESS)
      << where;
  EXPECT_EQ(MPI_Fetch_and_op(s.fop.data(), s.fop_result.data(), t.type,
                             e.target, own, op, win),
            MPI_SUCCESS)
      << where;
  if (e.cas) {
    const MPI_Aint last = own + (kElems - 1) * t.extent;
    EXPECT_EQ(
        MPI_Compare_and_swap(s.cas_new.data(), s.cas_compare.data(),
                             s.cas_result.data(), t.type, e.target, last, win),
        MPI_SUCCESS)
        << where;
    EXPECT_EQ(MPI_Compare_and_swap(s.cas_compare.data(), s.cas_compare.data(),
                                   s.cas_result.data() + t.extent, t.type,
                                   e.target, last, win),
              MPI_SUCCESS)
        << where;
  }
}

// The reference for an entry's region and one origin's results.
struct Expected {
  std::vector<std::byte> region;  // the whole region, after every origin
  std::vector<OriginSide> origins;
};

// `as_mpich`: what native MPICH computes (MpichDeparts).
Expected Reference(const Entry& e, int entry, int size, bool as_mpich) {
  const TypeCase& t = *e.type;
  const MPI_Op op = e.op->op;
  const size_t block = static_cast<size_t>(kElems) * t.extent;
  Expected x;
  x.region.resize(RegionBytes(t, size));
  InitRegion(e, entry, size, x.region.data());
  for (int o = 0; o < size; ++o) {
    OriginSide s = MakeOriginSide(e, entry, o);
    std::byte* own = x.region.data() + (1 + o) * block;
    if (op == MPI_NO_OP) {
      std::memcpy(s.ga_result.data(), x.region.data(), block);
      std::memcpy(s.fop_result.data(), x.region.data() + t.extent, t.extent);
    } else {
      if (op != MPI_REPLACE) {
        ApplyAll(t, op, x.region.data(), s.acc.data(), kElems, as_mpich);
      }
      std::memcpy(s.ga_result.data(), own, block);
      ApplyAll(t, op, own, s.ga.data(), kElems, as_mpich);
      std::memcpy(s.fop_result.data(), own, t.extent);
      ApplyAll(t, op, own, s.fop.data(), 1, as_mpich);
    }
    if (e.cas) {
      std::byte* last = own + (kElems - 1) * t.extent;
      std::memcpy(s.cas_result.data(), last, t.extent);
      std::memcpy(last, s.cas_new.data(), t.extent);
      std::memcpy(s.cas_result.data() + t.extent, last, t.extent);
    }
    x.origins.push_back(std::move(s));
  }
  return x;
}

// How a table run synchronizes.
enum class Epoch { kLockAll, kSharedLocks, kExclusiveLocks, kFence };

const char* EpochName(Epoch epoch) {
  switch (epoch) {
    case Epoch::kLockAll:
      return "lock_all";
    case Epoch::kSharedLocks:
      return "shared locks";
    case Epoch::kExclusiveLocks:
      return "exclusive locks";
    case Epoch::kFence:
      return "fence";
  }
  return "?";
}

// Runs the whole table on `win` (whose memory is `base`) in one epoch per
// target; returns this origin's results per entry.
std::vector<OriginSide> RunTable(MPI_Win win, std::byte* base,
                                 const std::vector<Entry>& entries,
                                 Epoch epoch) {
  const int rank = Rank(), size = Size();
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);  // local init, in an epoch
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].target == rank) {
      InitRegion(entries[i], static_cast<int>(i), size,
                 base + entries[i].offset);
    }
  }
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<OriginSide> sides;
  for (size_t i = 0; i < entries.size(); ++i) {
    sides.push_back(MakeOriginSide(entries[i], static_cast<int>(i), rank));
  }
  auto issue_for = [&](int target) {
    for (size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].target == target) {
        IssueEntry(win, entries[i], rank, sides[i]);
      }
    }
  };
  switch (epoch) {
    case Epoch::kLockAll:
      EXPECT_EQ(MPI_Win_lock_all(0, win), MPI_SUCCESS);
      for (int k = 0; k < size; ++k) issue_for((rank + k) % size);
      EXPECT_EQ(MPI_Win_unlock_all(win), MPI_SUCCESS);
      break;
    case Epoch::kSharedLocks:
    case Epoch::kExclusiveLocks: {
      const int type =
          epoch == Epoch::kSharedLocks ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE;
      for (int k = 0; k < size; ++k) {
        const int target = (rank + k) % size;
        EXPECT_EQ(MPI_Win_lock(type, target, 0, win), MPI_SUCCESS);
        issue_for(target);
        EXPECT_EQ(MPI_Win_unlock(target, win), MPI_SUCCESS);
      }
      break;
    }
    case Epoch::kFence:
      EXPECT_EQ(MPI_Win_fence(MPI_MODE_NOPRECEDE, win), MPI_SUCCESS);
      for (int k = 0; k < size; ++k) issue_for((rank + k) % size);
      EXPECT_EQ(MPI_Win_fence(MPI_MODE_NOSUCCEED, win), MPI_SUCCESS);
      break;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return sides;
}

// Checks this rank's regions and results of a table run against the
// reference; returns the first mismatch per entry.
std::vector<std::string> CheckTable(const std::vector<Entry>& entries,
                                    const std::byte* base,
                                    const std::vector<OriginSide>& sides,
                                    const std::string& label, bool as_mpich,
                                    bool skip_departures = false) {
  const int rank = Rank(), size = Size();
  std::vector<std::string> problems;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    const TypeCase& t = *e.type;
    if (skip_departures && MpichDeparts(t, e.op->op)) continue;
    const Expected x = Reference(e, static_cast<int>(i), size, as_mpich);
    const std::string name = label + " " + t.name + " " + e.op->name +
                             " (target " + std::to_string(e.target) + ")";
    std::string p;
    if (e.target == rank) {
      p = Diff(t, base + e.offset, x.region.data(), (1 + size) * kElems,
               name + " window");
    }
    const OriginSide& got = sides[i];
    const OriginSide& want = x.origins[rank];
    if (p.empty()) {
      p = Diff(t, got.ga_result.data(), want.ga_result.data(), kElems,
               name + " get_accumulate result");
    }
    if (p.empty()) {
      p = Diff(t, got.fop_result.data(), want.fop_result.data(), 1,
               name + " fetch_and_op result");
    }
    if (p.empty() && e.cas) {
      p = Diff(t, got.cas_result.data(), want.cas_result.data(), 2,
               name + " compare_and_swap results");
    }
    if (!p.empty()) problems.push_back(p);
  }
  return problems;
}

// The two windows serve every epoch kind: creating windows costs more than
// running the table.
class AccumulateTableTest : public testing::TestWithParam<Epoch> {
 protected:
  static void SetUpTestSuite() {
    MPI_Aint bytes = 0;
    TableEntries(Size(), &bytes);
    OptOutInfo opt_out;
    managed_ = new AllocWindow(bytes, 1);
    native_ = new AllocWindow(NativeSafeBytes(bytes), 1, opt_out.get());
    if (native_->rc() == MPI_SUCCESS) FindCasRefused(native_->win());
  }
  static void TearDownTestSuite() {
    delete managed_;
    delete native_;
  }
  static AllocWindow* managed_;
  static AllocWindow* native_;
};
AllocWindow* AccumulateTableTest::managed_ = nullptr;
AllocWindow* AccumulateTableTest::native_ = nullptr;

// Every origin applies every (type, op) pair MPI defines to one target per
// pair, on a managed and on a native window. Both match the reference, and
// their memory and results agree value byte for value byte.
TEST_P(AccumulateTableTest, EveryOpOnEveryTypeMatchesReferenceAndNative) {
  const int rank = Rank(), size = Size();
  MPI_Aint bytes = 0;
  const std::vector<Entry> entries = TableEntries(size, &bytes);
  const AllocWindow& managed = *managed_;
  const AllocWindow& native = *native_;
  ASSERT_EQ(managed.rc(), MPI_SUCCESS);
  ASSERT_EQ(native.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(managed.win()));
  EXPECT_FALSE(IsManaged(native.win()));

  const auto managed_sides =
      RunTable(managed.win(), managed.base(), entries, GetParam());
  const auto native_sides =
      RunTable(native.win(), native.base(), entries, GetParam());

  // The shim computes accumulates itself on single-node windows, and on
  // windows spanning nodes in passive and fence epochs where its agent runs
  // (remote origins' ones too, shim/agent/agent.h); elsewhere MPI does, with
  // MPICH's departures, except under an exclusive lock on a node-local or own
  // target, which the shim serves. There a region's unsigned MIN/MAX mixes
  // both (MPI's signed ordering for remote origins, MPI's definition for
  // node-local ones), so those entries are left out of the managed side's
  // checks; every other entry is checked.
  const bool by_agent = AgentRunning();
  const bool passed_through = !AllOnOneNode(MPI_COMM_WORLD) && !by_agent;
  const bool mixed = passed_through && GetParam() == Epoch::kExclusiveLocks;
  const std::string epoch = EpochName(GetParam());
  for (const std::string& p :
       CheckTable(entries, managed.base(), managed_sides, "shim " + epoch,
                  passed_through, mixed)) {
    ADD_FAILURE() << p;
  }
  for (const std::string& p : CheckTable(entries, native.base(), native_sides,
                                         "native " + epoch, true)) {
    ADD_FAILURE() << p;
  }
  // Differential, independent of the reference: same values everywhere
  // except where the shim is right and MPICH is not.
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    const TypeCase& t = *e.type;
    if ((!passed_through || mixed) && MpichDeparts(t, e.op->op)) continue;
    const std::string name = std::string(t.name) + " " + e.op->name;
    if (e.target == rank) {
      EXPECT_EQ(Diff(t, managed.base() + e.offset, native.base() + e.offset,
                     (1 + size) * kElems, name + " shim vs native window"),
                "");
    }
    EXPECT_EQ(Diff(t, managed_sides[i].ga_result.data(),
                   native_sides[i].ga_result.data(), kElems,
                   name + " shim vs native get_accumulate"),
              "");
    EXPECT_EQ(Diff(t, managed_sides[i].fop_result.data(),
                   native_sides[i].fop_result.data(), 1,
                   name + " shim vs native fetch_and_op"),
              "");
  }
}

INSTANTIATE_TEST_SUITE_P(Epochs, AccumulateTableTest,
                         testing::Values(Epoch::kLockAll, Epoch::kSharedLocks,
                                         Epoch::kExclusiveLocks, Epoch::kFence),
                         [](const testing::TestParamInfo<Epoch>& info) {
                           switch (info.param) {
                             case Epoch::kLockAll:
                               return "LockAll";
                             case Epoch::kSharedLocks:
                               return "SharedLocks";
                             case Epoch::kExclusiveLocks:
                               return "ExclusiveLocks";
                             case Epoch::kFence:
                               return "Fence";
                           }
                           return "Unknown";
                         });

}  // namespace
}  // namespace rmashim_test::accumulate
