// Error classes of the accumulate family and of RMA synchronization on
// managed windows, with MPI_ERRORS_RETURN, and that a failed call writes
// nothing. Every case native MPICH survives also runs on a native (opt-out)
// window, and the shim must answer with native's class; where native MPICH
// hangs, crashes or writes outside the window, the shim must answer with
// the class the MPI standard names.
// The cases' runner and fixture are in rma_error_cases.h.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "tests/mpi/rma_error_cases.h"
#include "tests/mpi_test_util.h"

namespace rmashim_rma_errors {
namespace {

using rmashim_test::Rank;
using rmashim_test::Size;

void user_fn(void*, void*, int*, MPI_Datatype*) {}

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
}  // namespace rmashim_rma_errors
