// Error classes of the accumulate family and of RMA synchronization on
// managed windows, with MPI_ERRORS_RETURN, and that a failed call writes
// nothing. Every case native MPICH survives also runs on a native (opt-out)
// window, and the shim must answer with native's class; where native MPICH
// hangs, crashes or writes outside the window, the shim must answer with
// the class the MPI standard names.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AllocWindow;
using rmashim_test::ErrorClass;
using rmashim_test::IsManaged;
using rmashim_test::NativeSafeBytes;
using rmashim_test::OptOutInfo;
using rmashim_test::PatternByte;
using rmashim_test::Rank;
using rmashim_test::Size;

constexpr MPI_Aint kWindowBytes = 64;

// The epoch a case's call is made in.
enum class Epoch {
  kLockAll,   // lock_all ... unlock_all
  kNone,      // no epoch at all
  kPscwSelf,  // post/start on {self}; the call may name other ranks
  kCustom,    // the call synchronizes itself
};

// Buffers a call may read or write, patterned so any write shows.
struct Buffers {
  alignas(16) std::byte origin[64];
  alignas(16) std::byte compare[64];
  alignas(16) std::byte result[64];
};

struct Case {
  std::string name;
  int standard_class;  // what MPI names for it
  bool run_native;     // native MPICH returns (rather than hang or crash)
  Epoch epoch;
  // Makes the call on `win` at window rank `target`; returns its code.
  std::function<int(MPI_Win win, int target, Buffers& b)> call;
};

void user_fn(void*, void*, int*, MPI_Datatype*) {}

// The outcome of a case on one window.
struct Outcome {
  int error_class = -1;
  std::vector<std::byte> window;  // this rank's window afterwards
  Buffers buffers;
};

void Fill(Buffers& b, int rank) {
  for (size_t i = 0; i < sizeof b.origin; ++i) {
    // Small values keep every interpretation (bool, float...) harmless.
    b.origin[i] = std::byte{static_cast<unsigned char>(i % 2)};
    b.compare[i] = std::byte{0};
    b.result[i] = PatternByte(rank, i, 3);
  }
}

Outcome RunCase(const Case& c, MPI_Win win, std::byte* base) {
  const int rank = Rank(), size = Size();
  const int target = (rank + 1) % size;
  for (MPI_Aint i = 0; i < kWindowBytes; ++i) base[i] = PatternByte(rank, i);
  Outcome out;
  Fill(out.buffers, rank);
  MPI_Group self_group = MPI_GROUP_NULL;
  if (c.epoch == Epoch::kPscwSelf) {
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &rank, &self_group);
    MPI_Group_free(&world);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  switch (c.epoch) {
    case Epoch::kLockAll:
      EXPECT_EQ(MPI_Win_lock_all(0, win), MPI_SUCCESS);
      break;
    case Epoch::kPscwSelf:
      EXPECT_EQ(MPI_Win_post(self_group, 0, win), MPI_SUCCESS);
      EXPECT_EQ(MPI_Win_start(self_group, 0, win), MPI_SUCCESS);
      break;
    case Epoch::kNone:
    case Epoch::kCustom:
      break;
  }
  out.error_class = ErrorClass(c.call(win, target, out.buffers));
  switch (c.epoch) {
    case Epoch::kLockAll:
      EXPECT_EQ(MPI_Win_unlock_all(win), MPI_SUCCESS) << c.name;
      break;
    case Epoch::kPscwSelf:
      EXPECT_EQ(MPI_Win_complete(win), MPI_SUCCESS) << c.name;
      EXPECT_EQ(MPI_Win_wait(win), MPI_SUCCESS) << c.name;
      MPI_Group_free(&self_group);
      break;
    case Epoch::kNone:
    case Epoch::kCustom:
      break;
  }
  MPI_Barrier(MPI_COMM_WORLD);  // every access to this window is over
  out.window.assign(base, base + kWindowBytes);
  return out;
}

// One managed and one native window for every case: creating windows
// costs more than the cases.
class RmaErrorsTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    OptOutInfo opt_out;
    managed_ = new AllocWindow(kWindowBytes, 1);
    native_ = new AllocWindow(NativeSafeBytes(kWindowBytes), 1, opt_out.get());
    for (AllocWindow* w : {managed_, native_}) {
      if (w->rc() == MPI_SUCCESS) {
        MPI_Win_set_errhandler(w->win(), MPI_ERRORS_RETURN);
      }
    }
  }
  static void TearDownTestSuite() {
    delete managed_;
    delete native_;
  }
  // Runs `cases` on the managed window and, where native MPICH survives
  // them, on the native one; checks classes and that failures wrote
  // nothing.
  static void Check(const std::vector<Case>& cases);
  static AllocWindow* managed_;
  static AllocWindow* native_;
};
AllocWindow* RmaErrorsTest::managed_ = nullptr;
AllocWindow* RmaErrorsTest::native_ = nullptr;

void RmaErrorsTest::Check(const std::vector<Case>& cases) {
  const int rank = Rank();
  const AllocWindow& managed = *managed_;
  const AllocWindow& native = *native_;
  ASSERT_EQ(managed.rc(), MPI_SUCCESS);
  ASSERT_EQ(native.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(managed.win()));
  Buffers pristine;
  Fill(pristine, rank);
  std::vector<std::byte> untouched(kWindowBytes);
  for (MPI_Aint i = 0; i < kWindowBytes; ++i)
    untouched[i] = PatternByte(rank, i);
  for (const Case& c : cases) {
    const Outcome shim = RunCase(c, managed.win(), managed.base());
    int want = c.standard_class;
    if (c.run_native) {
      const Outcome mpich = RunCase(c, native.win(), native.base());
      want = mpich.error_class;
      if (want == MPI_SUCCESS && shim.error_class == MPI_SUCCESS) {
        // Both accepted the call: same effect.
        EXPECT_EQ(shim.window, mpich.window) << c.name << ": window differs";
        EXPECT_EQ(std::memcmp(shim.buffers.result, mpich.buffers.result,
                              sizeof shim.buffers.result),
                  0)
            << c.name << ": result buffer differs";
      }
      if (want != c.standard_class) {
        // Recorded so a change in MPICH shows up here.
        std::printf("[ note     ] %s: native MPICH class %d, MPI names %d\n",
                    c.name.c_str(), want, c.standard_class);
      }
    }
    EXPECT_EQ(shim.error_class, want) << c.name;
    if (shim.error_class != MPI_SUCCESS) {
      // Nothing written: no target's window, no result buffer.
      EXPECT_EQ(shim.window, untouched) << c.name << ": window written";
      EXPECT_EQ(std::memcmp(shim.buffers.result, pristine.result,
                            sizeof pristine.result),
                0)
          << c.name << ": result buffer written";
    }
  }
}

int Acc(MPI_Win win, int target, Buffers& b, MPI_Datatype type, MPI_Op op,
        MPI_Aint disp = 0, int count = 1) {
  return MPI_Accumulate(b.origin, count, type, target, disp, count, type, op,
                        win);
}

// Ops, types and arguments native MPICH rejects itself.
TEST_F(RmaErrorsTest, OpsTypesAndArguments) {
  Check({
      {"MPI_Op_create op in MPI_Accumulate", MPI_ERR_OP, true, Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         MPI_Op user;
         MPI_Op_create(user_fn, 1, &user);
         const int rc = Acc(w, t, b, MPI_INT, user);
         MPI_Op_free(&user);
         return rc;
       }},
      {"MPI_Op_create op in MPI_Fetch_and_op", MPI_ERR_OP, true,
       Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         MPI_Op user;
         MPI_Op_create(user_fn, 1, &user);
         const int rc =
             MPI_Fetch_and_op(b.origin, b.result, MPI_INT, t, 0, user, w);
         MPI_Op_free(&user);
         return rc;
       }},
      {"MPI_OP_NULL in MPI_Accumulate", MPI_ERR_OP, true, Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return Acc(w, t, b, MPI_INT, MPI_OP_NULL);
       }},
      {"MPI_NO_OP in MPI_Accumulate", MPI_ERR_OP, true, Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return Acc(w, t, b, MPI_INT, MPI_NO_OP);
       }},
      {"MPI_NO_OP in MPI_Raccumulate", MPI_ERR_OP, true, Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         MPI_Request req = MPI_REQUEST_NULL;
         const int rc = MPI_Raccumulate(b.origin, 1, MPI_INT, t, 0, 1, MPI_INT,
                                        MPI_NO_OP, w, &req);
         if (req != MPI_REQUEST_NULL) MPI_Wait(&req, MPI_STATUS_IGNORE);
         return rc;
       }},
      {"MPI_Compare_and_swap on MPI_DOUBLE", MPI_ERR_TYPE, true,
       Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return MPI_Compare_and_swap(b.origin, b.compare, b.result, MPI_DOUBLE,
                                     t, 0, w);
       }},
      {"MPI_Compare_and_swap on MPI_FLOAT_INT", MPI_ERR_TYPE, true,
       Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return MPI_Compare_and_swap(b.origin, b.compare, b.result,
                                     MPI_FLOAT_INT, t, 0, w);
       }},
      {"MPI_Compare_and_swap on MPI_C_FLOAT_COMPLEX", MPI_ERR_TYPE, true,
       Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return MPI_Compare_and_swap(b.origin, b.compare, b.result,
                                     MPI_C_FLOAT_COMPLEX, t, 0, w);
       }},
      {"negative displacement", MPI_ERR_DISP, true, Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return Acc(w, t, b, MPI_INT, MPI_SUM, -4);
       }},
      {"target rank out of the group", MPI_ERR_RANK, true, Epoch::kLockAll,
       [](MPI_Win w, int, Buffers& b) {
         return Acc(w, Size(), b, MPI_INT, MPI_SUM);
       }},
      {"MPI_Fetch_and_op rank out of the group", MPI_ERR_RANK, true,
       Epoch::kLockAll,
       [](MPI_Win w, int, Buffers& b) {
         return MPI_Fetch_and_op(b.origin, b.result, MPI_INT, Size(), 0,
                                 MPI_SUM, w);
       }},
  });
}

// Combinations MPI calls erroneous that native MPICH nevertheless carries
// out (with MPI_SUCCESS): the shim must do as native does.
// Native MPICH accepts these erroneous calls (and on some layouts applies
// them); the shim rejects them on every layout with the class MPI names, as
// README says, so they are not compared with native.
TEST_F(RmaErrorsTest, ErroneousCallsNativeMpichAccepts) {
  Check({
      {"MPI_BAND on MPI_FLOAT", MPI_ERR_OP, false, Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return Acc(w, t, b, MPI_FLOAT, MPI_BAND);
       }},
      {"MPI_SUM on MPI_C_BOOL", MPI_ERR_OP, false, Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return Acc(w, t, b, MPI_C_BOOL, MPI_SUM);
       }},
      {"MPI_SUM on MPI_BYTE", MPI_ERR_OP, false, Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return Acc(w, t, b, MPI_BYTE, MPI_SUM);
       }},
      {"origin MPI_INT, target MPI_FLOAT", MPI_ERR_TYPE, false, Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return MPI_Accumulate(b.origin, 1, MPI_INT, t, 0, 1, MPI_FLOAT,
                               MPI_SUM, w);
       }},
      {"origin 2 x MPI_INT, target MPI_DOUBLE", MPI_ERR_TYPE, false,
       Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return MPI_Accumulate(b.origin, 2, MPI_INT, t, 0, 1, MPI_DOUBLE,
                               MPI_SUM, w);
       }},
      {"get_accumulate result MPI_FLOAT, target MPI_INT", MPI_ERR_TYPE, false,
       Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return MPI_Get_accumulate(b.origin, 1, MPI_INT, b.result, 1, MPI_FLOAT,
                                   t, 0, 1, MPI_INT, MPI_SUM, w);
       }},
  });
}

// Synchronization errors: MPI_ERR_RMA_SYNC everywhere, as native MPICH.
TEST_F(RmaErrorsTest, Synchronization) {
  Check({
      {"MPI_Accumulate outside an epoch", MPI_ERR_RMA_SYNC, true, Epoch::kNone,
       [](MPI_Win w, int t, Buffers& b) {
         return Acc(w, t, b, MPI_INT, MPI_SUM);
       }},
      {"MPI_Get_accumulate outside an epoch", MPI_ERR_RMA_SYNC, true,
       Epoch::kNone,
       [](MPI_Win w, int t, Buffers& b) {
         return MPI_Get_accumulate(b.origin, 1, MPI_INT, b.result, 1, MPI_INT,
                                   t, 0, 1, MPI_INT, MPI_SUM, w);
       }},
      {"MPI_Fetch_and_op outside an epoch", MPI_ERR_RMA_SYNC, true,
       Epoch::kNone,
       [](MPI_Win w, int t, Buffers& b) {
         return MPI_Fetch_and_op(b.origin, b.result, MPI_INT, t, 0, MPI_SUM, w);
       }},
      {"MPI_Compare_and_swap outside an epoch", MPI_ERR_RMA_SYNC, true,
       Epoch::kNone,
       [](MPI_Win w, int t, Buffers& b) {
         return MPI_Compare_and_swap(b.origin, b.compare, b.result, MPI_INT, t,
                                     0, w);
       }},
      {"MPI_Raccumulate outside an epoch", MPI_ERR_RMA_SYNC, true, Epoch::kNone,
       [](MPI_Win w, int t, Buffers& b) {
         MPI_Request req = MPI_REQUEST_NULL;
         return MPI_Raccumulate(b.origin, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_SUM,
                                w, &req);
       }},
      {"MPI_Accumulate after unlock", MPI_ERR_RMA_SYNC, true, Epoch::kCustom,
       [](MPI_Win w, int t, Buffers& b) {
         MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w);
         MPI_Win_unlock(t, w);
         return Acc(w, t, b, MPI_INT, MPI_SUM);
       }},
      {"PSCW put to a rank outside the start group", MPI_ERR_RMA_SYNC, true,
       Epoch::kPscwSelf,
       [](MPI_Win w, int t, Buffers& b) {
         return MPI_Put(b.origin, 1, MPI_INT, t, 0, 1, MPI_INT, w);
       }},
      {"PSCW accumulate to a rank outside the start group", MPI_ERR_RMA_SYNC,
       true, Epoch::kPscwSelf,
       [](MPI_Win w, int t, Buffers& b) {
         return Acc(w, t, b, MPI_INT, MPI_SUM);
       }},
      {"PSCW fetch_and_op to a rank outside the start group", MPI_ERR_RMA_SYNC,
       true, Epoch::kPscwSelf,
       [](MPI_Win w, int t, Buffers& b) {
         return MPI_Fetch_and_op(b.origin, b.result, MPI_INT, t, 0, MPI_SUM, w);
       }},
      {"MPI_Win_wait without post", MPI_ERR_RMA_SYNC, true, Epoch::kCustom,
       [](MPI_Win w, int, Buffers&) { return MPI_Win_wait(w); }},
      {"MPI_Win_test without post", MPI_ERR_RMA_SYNC, true, Epoch::kCustom,
       [](MPI_Win w, int, Buffers&) {
         int flag = -1;
         return MPI_Win_test(w, &flag);
       }},
      {"MPI_Win_complete without start", MPI_ERR_RMA_SYNC, true, Epoch::kCustom,
       [](MPI_Win w, int, Buffers&) { return MPI_Win_complete(w); }},
      {"MPI_Win_post twice", MPI_ERR_RMA_SYNC, true, Epoch::kCustom,
       [](MPI_Win w, int, Buffers&) {
         MPI_Group world, self;
         const int me = Rank();
         MPI_Comm_group(MPI_COMM_WORLD, &world);
         MPI_Group_incl(world, 1, &me, &self);
         MPI_Win_post(self, 0, w);
         const int rc = MPI_Win_post(self, 0, w);
         MPI_Win_start(self, 0, w);
         MPI_Win_complete(w);
         MPI_Win_wait(w);
         MPI_Group_free(&self);
         MPI_Group_free(&world);
         return rc;
       }},
      {"MPI_Win_unlock without lock", MPI_ERR_RMA_SYNC, true, Epoch::kCustom,
       [](MPI_Win w, int t, Buffers&) { return MPI_Win_unlock(t, w); }},
      {"MPI_Win_flush outside an epoch", MPI_ERR_RMA_SYNC, true, Epoch::kCustom,
       [](MPI_Win w, int t, Buffers&) { return MPI_Win_flush(t, w); }},
      {"MPI_Win_unlock_all without lock_all", MPI_ERR_RMA_SYNC, true,
       Epoch::kCustom,
       [](MPI_Win w, int, Buffers&) { return MPI_Win_unlock_all(w); }},
  });
}

// Out-of-range accumulates. Native MPICH does not check: it writes outside
// the target's window or crashes, so only the shim runs them.
TEST_F(RmaErrorsTest, OutOfRange) {
  Check({
      {"MPI_Accumulate past the end", MPI_ERR_RMA_RANGE, false, Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return Acc(w, t, b, MPI_INT, MPI_SUM, kWindowBytes - 4, 2);
       }},
      {"MPI_Accumulate far past the end", MPI_ERR_RMA_RANGE, false,
       Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return Acc(w, t, b, MPI_INT, MPI_SUM, 4096);
       }},
      {"MPI_Get_accumulate past the end", MPI_ERR_RMA_RANGE, false,
       Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return MPI_Get_accumulate(b.origin, 4, MPI_INT, b.result, 4, MPI_INT,
                                   t, kWindowBytes - 8, 4, MPI_INT, MPI_SUM, w);
       }},
      {"MPI_Fetch_and_op past the end", MPI_ERR_RMA_RANGE, false,
       Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return MPI_Fetch_and_op(b.origin, b.result, MPI_INT64_T, t,
                                 kWindowBytes - 4, MPI_SUM, w);
       }},
      {"MPI_Compare_and_swap at the end", MPI_ERR_RMA_RANGE, false,
       Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return MPI_Compare_and_swap(b.origin, b.compare, b.result, MPI_INT64_T,
                                     t, kWindowBytes, w);
       }},
  });
}

// Request-based calls in a fence epoch: erroneous (only passive-target
// epochs allow them, MPI-4.1 12.3.5), which native MPICH 4.0.2 does not
// detect (it accepts them: tests/diff's errors program would differ), so
// only the shim runs them.
TEST_F(RmaErrorsTest, RequestBasedInFenceEpoch) {
  const auto in_fence = [](auto call) {
    return [call](MPI_Win w, int t, Buffers& b) {
      MPI_Win_fence(0, w);
      MPI_Request req = MPI_REQUEST_NULL;
      const int rc = call(w, t, b, &req);
      MPI_Win_fence(MPI_MODE_NOSUCCEED, w);
      return rc;
    };
  };
  Check({
      {"MPI_Rput in a fence epoch", MPI_ERR_RMA_SYNC, false, Epoch::kCustom,
       in_fence([](MPI_Win w, int t, Buffers& b, MPI_Request* req) {
         return MPI_Rput(b.origin, 1, MPI_INT, t, 0, 1, MPI_INT, w, req);
       })},
      {"MPI_Rget in a fence epoch", MPI_ERR_RMA_SYNC, false, Epoch::kCustom,
       in_fence([](MPI_Win w, int t, Buffers& b, MPI_Request* req) {
         return MPI_Rget(b.result, 1, MPI_INT, t, 0, 1, MPI_INT, w, req);
       })},
      {"MPI_Raccumulate in a fence epoch", MPI_ERR_RMA_SYNC, false,
       Epoch::kCustom,
       in_fence([](MPI_Win w, int t, Buffers& b, MPI_Request* req) {
         return MPI_Raccumulate(b.origin, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_SUM,
                                w, req);
       })},
      {"MPI_Rget_accumulate in a fence epoch", MPI_ERR_RMA_SYNC, false,
       Epoch::kCustom,
       in_fence([](MPI_Win w, int t, Buffers& b, MPI_Request* req) {
         return MPI_Rget_accumulate(b.origin, 1, MPI_INT, b.result, 1, MPI_INT,
                                    t, 0, 1, MPI_INT, MPI_SUM, w, req);
       })},
  });
}

// An accumulate to a target this origin has not locked, while it holds a
// lock on another: native MPICH sends it anyway and later fails an
// assertion, so only the shim runs it.
TEST_F(RmaErrorsTest, AccumulateToUnlockedTarget) {
  Check({
      {"MPI_Accumulate to a rank not locked", MPI_ERR_RMA_SYNC, false,
       Epoch::kCustom,
       [](MPI_Win w, int t, Buffers& b) {
         const int self = Rank();
         MPI_Win_lock(MPI_LOCK_SHARED, self, 0, w);
         const int rc = t == self ? MPI_ERR_RMA_SYNC  // one rank: no other
                                  : Acc(w, t, b, MPI_INT, MPI_SUM);
         MPI_Win_unlock(self, w);
         return rc;
       }},
  });
}

// Ops a type does not take where native MPICH hangs or aborts: the shim
// must refuse them with MPI_ERR_OP before anything reaches MPI. Last in the
// file because a failure here may hang the run (MPIEXEC_TIMEOUT ends it).
TEST_F(RmaErrorsTest, InvalidOpForTypeNativeMpichCannotSurvive) {
  Check({
      {"MPI_BAND on MPI_DOUBLE", MPI_ERR_OP, false, Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return Acc(w, t, b, MPI_DOUBLE, MPI_BAND);
       }},
      {"MPI_MAXLOC on MPI_INT", MPI_ERR_OP, false, Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return Acc(w, t, b, MPI_INT, MPI_MAXLOC);
       }},
      {"MPI_SUM on MPI_2INT", MPI_ERR_OP, false, Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return Acc(w, t, b, MPI_2INT, MPI_SUM);
       }},
      {"MPI_LAND on MPI_C_DOUBLE_COMPLEX", MPI_ERR_OP, false, Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return Acc(w, t, b, MPI_C_DOUBLE_COMPLEX, MPI_LAND);
       }},
      {"MPI_Fetch_and_op MPI_BAND on MPI_DOUBLE", MPI_ERR_OP, false,
       Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return MPI_Fetch_and_op(b.origin, b.result, MPI_DOUBLE, t, 0, MPI_BAND,
                                 w);
       }},
      {"MPI_Get_accumulate MPI_LOR on MPI_DOUBLE", MPI_ERR_OP, false,
       Epoch::kLockAll,
       [](MPI_Win w, int t, Buffers& b) {
         return MPI_Get_accumulate(b.origin, 1, MPI_DOUBLE, b.result, 1,
                                   MPI_DOUBLE, t, 0, 1, MPI_DOUBLE, MPI_LOR, w);
       }},
  });
}

}  // namespace
