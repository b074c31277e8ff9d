// A table of bad calls on managed windows: each must return the right MPI
// error class through the window's error handler, to every target (self,
// node-local peers, other nodes), and leave every byte of every window (and
// of get buffers) untouched, after which the window still works. Where
// native MPICH detects the same mistake safely, the shim must report the
// class MPICH reports.
#include <gtest/gtest.h>
#include <mpi.h>

#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "tests/mpi/shim_error_util.h"
#include "tests/mpi_test_util.h"

namespace rmashim_test::error {
namespace {

// Where a bad call is issued from.
enum class Epoch {
  kNone,        // no access epoch at all
  kLockAll,     // inside lock_all
  kLockTarget,  // inside a shared lock on the target
  kLockOther,   // inside a shared lock on a different rank only
};

struct CallArgs {
  MPI_Win win;
  int target;
  int size;
  const int* origin;  // kInts ints
  int* result;        // kInts ints, must stay at kGetSentinel
};

// The MPI standard's class for a bad lock type is MPI_ERR_LOCKTYPE, but
// MPICH 4.0.2 reports MPI_ERR_ARG and the shim matches MPICH; such rows
// take their expected class from native MPICH.
constexpr int kAsNativeMpich = -1;

struct BadCall {
  const char* name;
  int expected_class;
  // Whether native MPICH detects the mistake without crashing or writing
  // memory, so its class can serve as a reference.
  bool native_detects;
  Epoch epoch;
  int (*call)(const CallArgs&);
};

MPI_Datatype Committed(MPI_Datatype t) {
  MPI_Type_commit(&t);
  return t;
}

// A request-based call that wrongly succeeded still has to be completed.
int CompleteIfIssued(int rc, MPI_Request* request) {
  if (rc == MPI_SUCCESS) MPI_Wait(request, MPI_STATUS_IGNORE);
  return rc;
}

const BadCall kBadCalls[] = {
    {"PutPastTheEnd", MPI_ERR_RMA_RANGE, false, Epoch::kLockAll,
     [](const CallArgs& a) {
       return MPI_Put(a.origin, 1, MPI_INT, a.target, kInts, 1, MPI_INT, a.win);
     }},
    {"PutStraddlingTheEnd", MPI_ERR_RMA_RANGE, false, Epoch::kLockTarget,
     [](const CallArgs& a) {
       return MPI_Put(a.origin, 4, MPI_INT, a.target, kInts - 2, 4, MPI_INT,
                      a.win);
     }},
    {"GetPastTheEnd", MPI_ERR_RMA_RANGE, false, Epoch::kLockAll,
     [](const CallArgs& a) {
       return MPI_Get(a.result, 2, MPI_INT, a.target, kInts, 2, MPI_INT, a.win);
     }},
    {"GetStraddlingTheEnd", MPI_ERR_RMA_RANGE, false, Epoch::kLockTarget,
     [](const CallArgs& a) {
       return MPI_Get(a.result, kInts, MPI_INT, a.target, 1, kInts, MPI_INT,
                      a.win);
     }},
    {"PutVectorExtentOvershoots", MPI_ERR_RMA_RANGE, false, Epoch::kLockAll,
     [](const CallArgs& a) {
       // Two ints kInts apart: the second lies just past the window.
       MPI_Datatype t;
       MPI_Type_vector(2, 1, kInts, MPI_INT, &t);
       t = Committed(t);
       const int rc = MPI_Put(a.origin, 2, MPI_INT, a.target, 0, 1, t, a.win);
       MPI_Type_free(&t);
       return rc;
     }},
    {"GetResizedCountOvershoots", MPI_ERR_RMA_RANGE, false, Epoch::kLockAll,
     [](const CallArgs& a) {
       // Ints 12 bytes apart: three fit in 32 bytes, the fourth does not.
       MPI_Datatype t;
       MPI_Type_create_resized(MPI_INT, 0, 12, &t);
       t = Committed(t);
       const int rc = MPI_Get(a.result, 4, MPI_INT, a.target, 0, 4, t, a.win);
       MPI_Type_free(&t);
       return rc;
     }},
    {"PutHindexedReachesBelowTheStart", MPI_ERR_RMA_RANGE, false,
     Epoch::kLockAll,
     [](const CallArgs& a) {
       // One int at displacement 0 and one 8 bytes before it.
       const int blocks[] = {1, 1};
       const MPI_Aint displs[] = {0, -8};
       MPI_Datatype t;
       MPI_Type_create_hindexed(2, blocks, displs, MPI_INT, &t);
       t = Committed(t);
       const int rc = MPI_Put(a.origin, 2, MPI_INT, a.target, 1, 1, t, a.win);
       MPI_Type_free(&t);
       return rc;
     }},
    {"PutDisplacementOverflows", MPI_ERR_RMA_RANGE, false, Epoch::kLockAll,
     [](const CallArgs& a) {
       const MPI_Aint huge = std::numeric_limits<MPI_Aint>::max() / 2;
       return MPI_Put(a.origin, 1, MPI_INT, a.target, huge, 1, MPI_INT, a.win);
     }},
    {"PutNegativeDisplacement", MPI_ERR_DISP, true, Epoch::kLockAll,
     [](const CallArgs& a) {
       return MPI_Put(a.origin, 1, MPI_INT, a.target, -1, 1, MPI_INT, a.win);
     }},
    {"GetNegativeDisplacement", MPI_ERR_DISP, true, Epoch::kLockTarget,
     [](const CallArgs& a) {
       return MPI_Get(a.result, 1, MPI_INT, a.target, -4, 1, MPI_INT, a.win);
     }},
    {"PutTargetRankIsSize", MPI_ERR_RANK, true, Epoch::kLockAll,
     [](const CallArgs& a) {
       return MPI_Put(a.origin, 1, MPI_INT, a.size, 0, 1, MPI_INT, a.win);
     }},
    {"GetTargetRankBelowProcNull", MPI_ERR_RANK, true, Epoch::kLockAll,
     [](const CallArgs& a) {
       return MPI_Get(a.result, 1, MPI_INT, MPI_PROC_NULL - 1, 0, 1, MPI_INT,
                      a.win);
     }},
    {"PutTargetRankVeryNegative", MPI_ERR_RANK, true, Epoch::kLockAll,
     [](const CallArgs& a) {
       return MPI_Put(a.origin, 1, MPI_INT, -100, 0, 1, MPI_INT, a.win);
     }},
    {"PutOutsideAnyEpoch", MPI_ERR_RMA_SYNC, true, Epoch::kNone,
     [](const CallArgs& a) {
       return MPI_Put(a.origin, 1, MPI_INT, a.target, 0, 1, MPI_INT, a.win);
     }},
    {"GetOutsideAnyEpoch", MPI_ERR_RMA_SYNC, true, Epoch::kNone,
     [](const CallArgs& a) {
       return MPI_Get(a.result, 1, MPI_INT, a.target, 0, 1, MPI_INT, a.win);
     }},
    {"AccumulateOutsideAnyEpoch", MPI_ERR_RMA_SYNC, true, Epoch::kNone,
     [](const CallArgs& a) {
       return MPI_Accumulate(a.origin, 1, MPI_INT, a.target, 0, 1, MPI_INT,
                             MPI_SUM, a.win);
     }},
    {"GetAccumulateOutsideAnyEpoch", MPI_ERR_RMA_SYNC, true, Epoch::kNone,
     [](const CallArgs& a) {
       return MPI_Get_accumulate(a.origin, 1, MPI_INT, a.result, 1, MPI_INT,
                                 a.target, 0, 1, MPI_INT, MPI_SUM, a.win);
     }},
    {"FetchAndOpOutsideAnyEpoch", MPI_ERR_RMA_SYNC, true, Epoch::kNone,
     [](const CallArgs& a) {
       return MPI_Fetch_and_op(a.origin, a.result, MPI_INT, a.target, 0,
                               MPI_SUM, a.win);
     }},
    {"CompareAndSwapOutsideAnyEpoch", MPI_ERR_RMA_SYNC, true, Epoch::kNone,
     [](const CallArgs& a) {
       const int compare = WindowValue(a.target, 0);
       return MPI_Compare_and_swap(a.origin, &compare, a.result, MPI_INT,
                                   a.target, 0, a.win);
     }},
    {"RputOutsideAnyEpoch", MPI_ERR_RMA_SYNC, true, Epoch::kNone,
     [](const CallArgs& a) {
       MPI_Request request;
       return CompleteIfIssued(MPI_Rput(a.origin, 1, MPI_INT, a.target, 0, 1,
                                        MPI_INT, a.win, &request),
                               &request);
     }},
    {"RgetOutsideAnyEpoch", MPI_ERR_RMA_SYNC, true, Epoch::kNone,
     [](const CallArgs& a) {
       MPI_Request request;
       return CompleteIfIssued(MPI_Rget(a.result, 1, MPI_INT, a.target, 0, 1,
                                        MPI_INT, a.win, &request),
                               &request);
     }},
    {"RaccumulateOutsideAnyEpoch", MPI_ERR_RMA_SYNC, true, Epoch::kNone,
     [](const CallArgs& a) {
       MPI_Request request;
       return CompleteIfIssued(
           MPI_Raccumulate(a.origin, 1, MPI_INT, a.target, 0, 1, MPI_INT,
                           MPI_SUM, a.win, &request),
           &request);
     }},
    // MPICH lets this one through and writes.
    {"PutToATargetThatIsNotLocked", MPI_ERR_RMA_SYNC, false, Epoch::kLockOther,
     [](const CallArgs& a) {
       return MPI_Put(a.origin, 1, MPI_INT, a.target, 0, 1, MPI_INT, a.win);
     }},
    {"UnlockOfAnUnlockedTarget", MPI_ERR_RMA_SYNC, true, Epoch::kNone,
     [](const CallArgs& a) { return MPI_Win_unlock(a.target, a.win); }},
    // MPICH asserts on this one.
    {"UnlockOfATargetOtherThanTheLockedOne", MPI_ERR_RMA_SYNC, false,
     Epoch::kLockOther,
     [](const CallArgs& a) { return MPI_Win_unlock(a.target, a.win); }},
    {"UnlockAllWithoutLockAll", MPI_ERR_RMA_SYNC, true, Epoch::kNone,
     [](const CallArgs& a) { return MPI_Win_unlock_all(a.win); }},
    {"FlushOutsideAnyEpoch", MPI_ERR_RMA_SYNC, true, Epoch::kNone,
     [](const CallArgs& a) { return MPI_Win_flush(a.target, a.win); }},
    {"DoubleLockOfOneTarget", MPI_ERR_RMA_SYNC, true, Epoch::kLockTarget,
     [](const CallArgs& a) {
       return MPI_Win_lock(MPI_LOCK_EXCLUSIVE, a.target, 0, a.win);
     }},
    {"LockAllInsideLockAll", MPI_ERR_RMA_SYNC, true, Epoch::kLockAll,
     [](const CallArgs& a) { return MPI_Win_lock_all(0, a.win); }},
    {"BadLockType", kAsNativeMpich, true, Epoch::kNone,
     [](const CallArgs& a) { return MPI_Win_lock(12345, a.target, 0, a.win); }},
    {"PutNegativeOriginCount", MPI_ERR_COUNT, true, Epoch::kLockAll,
     [](const CallArgs& a) {
       return MPI_Put(a.origin, -1, MPI_INT, a.target, 0, 1, MPI_INT, a.win);
     }},
    {"PutNegativeTargetCount", MPI_ERR_COUNT, true, Epoch::kLockAll,
     [](const CallArgs& a) {
       return MPI_Put(a.origin, 1, MPI_INT, a.target, 0, -1, MPI_INT, a.win);
     }},
    {"GetNegativeCounts", MPI_ERR_COUNT, true, Epoch::kLockTarget,
     [](const CallArgs& a) {
       return MPI_Get(a.result, -2, MPI_INT, a.target, 0, -2, MPI_INT, a.win);
     }},
    {"PutNullDatatype", MPI_ERR_TYPE, true, Epoch::kLockAll,
     [](const CallArgs& a) {
       return MPI_Put(a.origin, 1, MPI_DATATYPE_NULL, a.target, 0, 1, MPI_INT,
                      a.win);
     }},
    {"AccumulateNegativeDisplacement", MPI_ERR_DISP, true, Epoch::kLockAll,
     [](const CallArgs& a) {
       return MPI_Accumulate(a.origin, 1, MPI_INT, a.target, -1, 1, MPI_INT,
                             MPI_SUM, a.win);
     }},
    {"FetchAndOpTargetRankIsSize", MPI_ERR_RANK, true, Epoch::kLockAll,
     [](const CallArgs& a) {
       return MPI_Fetch_and_op(a.origin, a.result, MPI_INT, a.size, 0, MPI_SUM,
                               a.win);
     }},
};

// Opens the epoch a row asks for around `target`; false when the row cannot
// be set up here (kLockOther needs a second rank).
bool OpenEpoch(MPI_Win win, Epoch epoch, int target, int size) {
  switch (epoch) {
    case Epoch::kNone:
      return true;
    case Epoch::kLockAll:
      return MPI_Win_lock_all(0, win) == MPI_SUCCESS;
    case Epoch::kLockTarget:
      return MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win) == MPI_SUCCESS;
    case Epoch::kLockOther:
      return size > 1 && MPI_Win_lock(MPI_LOCK_SHARED, (target + 1) % size, 0,
                                      win) == MPI_SUCCESS;
  }
  return false;
}

void CloseEpoch(MPI_Win win, Epoch epoch, int target, int size) {
  switch (epoch) {
    case Epoch::kNone:
      break;
    case Epoch::kLockAll:
      EXPECT_EQ(MPI_Win_unlock_all(win), MPI_SUCCESS);
      break;
    case Epoch::kLockTarget:
      EXPECT_EQ(MPI_Win_unlock(target, win), MPI_SUCCESS);
      break;
    case Epoch::kLockOther:
      EXPECT_EQ(MPI_Win_unlock((target + 1) % size, win), MPI_SUCCESS);
      break;
  }
}

// Issues `bad` to each of `targets` from inside the epoch it asks for;
// returns the error class per target (-1 where it could not run).
std::vector<int> RunBadCall(const BadCall& bad, MPI_Win win,
                            const std::vector<int>& targets,
                            std::vector<int>& result) {
  const int size = Size();
  std::vector<int> origin(kInts);
  for (int i = 0; i < kInts; ++i) origin[i] = -(Rank() * 100 + i + 1);
  std::vector<int> classes;
  // An epoch that does not depend on the target is opened once.
  const bool shared_epoch =
      bad.epoch == Epoch::kNone || bad.epoch == Epoch::kLockAll;
  if (shared_epoch) OpenEpoch(win, bad.epoch, 0, size);
  for (int t : targets) {
    if (!shared_epoch && !OpenEpoch(win, bad.epoch, t, size)) {
      classes.push_back(-1);
      continue;
    }
    const CallArgs args{win, t, size, origin.data(), result.data()};
    classes.push_back(ErrorClass(bad.call(args)));
    if (!shared_epoch) CloseEpoch(win, bad.epoch, t, size);
  }
  if (shared_epoch) CloseEpoch(win, bad.epoch, 0, size);
  return classes;
}

// The shared managed window still works: a lock epoch and a lock_all epoch
// move data as usual. Collective; the next row's first barrier orders the
// restore at the end before anyone looks at the slot again.
void ExpectWindowStillWorks() {
  const int rank = Rank(), size = Size();
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  const MPI_Win win = g_windows->managed->win();
  int* mem = g_windows->managed->base<int>();
  // Reads one slot and writes another, so no barrier is needed in between.
  int got = -1;
  ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win), MPI_SUCCESS);
  EXPECT_EQ(MPI_Get(&got, 1, MPI_INT, next, kInts - 1, 1, MPI_INT, win),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Win_unlock(next, win), MPI_SUCCESS);
  EXPECT_EQ(got, WindowValue(next, kInts - 1));
  const int value = 42 + rank;
  ASSERT_EQ(MPI_Win_lock_all(0, win), MPI_SUCCESS);
  EXPECT_EQ(MPI_Put(&value, 1, MPI_INT, next, kInts - 2, 1, MPI_INT, win),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Win_unlock_all(win), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(mem[kInts - 2], 42 + prev);
  mem[kInts - 2] = WindowValue(rank, kInts - 2);
}

class ShimBadCallTest : public testing::TestWithParam<int> {};

TEST_P(ShimBadCallTest, ReturnsTheClassAndWritesNothing) {
  const BadCall& bad = kBadCalls[GetParam()];
  const int rank = Rank(), size = Size();
  ASSERT_EQ(g_windows->managed->rc(), MPI_SUCCESS);
  ASSERT_EQ(g_windows->native->rc(), MPI_SUCCESS);
  const MPI_Win managed = g_windows->managed->win();
  ASSERT_TRUE(IsManaged(managed));
  ASSERT_FALSE(IsManaged(g_windows->native->win()));

  int expected = bad.expected_class;
  if (bad.native_detects) {
    // The reference: native MPICH on one remote target.
    std::vector<int> result(kInts, kGetSentinel);
    const int native_class = RunBadCall(bad, g_windows->native->win(),
                                        {(rank + 1) % size}, result)[0];
    if (expected == kAsNativeMpich) {
      expected = native_class;
      EXPECT_TRUE(expected == MPI_ERR_LOCKTYPE || expected == MPI_ERR_ARG)
          << "native MPICH gave class " << expected;
    }
    EXPECT_EQ(native_class, expected) << "native MPICH (the reference)";
  }

  // The shim, against every target: self, node-local peers, other nodes.
  std::vector<int> targets(size);
  for (int t = 0; t < size; ++t) targets[t] = t;
  std::vector<int> result(kInts, kGetSentinel);
  const std::vector<int> classes = RunBadCall(bad, managed, targets, result);
  for (int t = 0; t < size; ++t) {
    EXPECT_EQ(classes[t], expected) << bad.name << ", target " << t;
  }
  for (int i = 0; i < kInts; ++i) {
    EXPECT_EQ(result[i], kGetSentinel) << "get buffer int " << i;
  }
  ExpectWindowUntouchedAndRestore(bad.name);
  ExpectWindowStillWorks();
}

INSTANTIATE_TEST_SUITE_P(Table, ShimBadCallTest,
                         testing::Range(0, int(std::size(kBadCalls))),
                         [](const testing::TestParamInfo<int>& info) {
                           return std::string(kBadCalls[info.param].name);
                         });

}  // namespace
}  // namespace rmashim_test::error
