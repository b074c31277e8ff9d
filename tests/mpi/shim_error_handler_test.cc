// Errors on managed windows beyond the bad-call table: MPI_PROC_NULL is a
// valid target that moves nothing, range errors of the accumulate family on
// a window served in shared memory, and a handler made with
// MPI_Win_create_errhandler that sees the window and each failure's class.
#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "tests/mpi/shim_error_util.h"
#include "tests/mpi_test_util.h"

namespace rmashim_test::error {
namespace {

// MPI_PROC_NULL is a valid target: every operation on it succeeds and moves
// nothing.
TEST(ShimErrorTest, ProcNullTargetIsANoOp) {
  const MPI_Win win = g_windows->managed->win();
  ASSERT_TRUE(IsManaged(win));
  std::vector<int> origin(kInts, -5), result(kInts, kGetSentinel);
  int compare = 0;
  for (int sync = 0; sync < 2; ++sync) {
    if (sync == 0) {
      ASSERT_EQ(MPI_Win_lock_all(0, win), MPI_SUCCESS);
    } else {
      ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, MPI_PROC_NULL, 0, win),
                MPI_SUCCESS);
    }
    EXPECT_EQ(MPI_Put(origin.data(), kInts, MPI_INT, MPI_PROC_NULL, 0, kInts,
                      MPI_INT, win),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Get(result.data(), kInts, MPI_INT, MPI_PROC_NULL, 0, kInts,
                      MPI_INT, win),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Accumulate(origin.data(), kInts, MPI_INT, MPI_PROC_NULL, 0,
                             kInts, MPI_INT, MPI_SUM, win),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Fetch_and_op(origin.data(), result.data(), MPI_INT,
                               MPI_PROC_NULL, 0, MPI_SUM, win),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Compare_and_swap(origin.data(), &compare, result.data(),
                                   MPI_INT, MPI_PROC_NULL, 0, win),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Win_flush(MPI_PROC_NULL, win), MPI_SUCCESS);
    if (sync == 0) {
      ASSERT_EQ(MPI_Win_unlock_all(win), MPI_SUCCESS);
    } else {
      ASSERT_EQ(MPI_Win_unlock(MPI_PROC_NULL, win), MPI_SUCCESS);
    }
  }
  for (int i = 0; i < kInts; ++i) EXPECT_EQ(result[i], kGetSentinel);
  ExpectWindowUntouchedAndRestore("MPI_PROC_NULL");
}

// Range errors of the accumulate family on a window the shim serves in
// shared memory (one node).
TEST(ShimErrorTest, AccumulateFamilyRangeErrorsOnANodeWindow) {
  ScopedComm node(rmashim_test::SplitNodeComm());
  const int node_rank = Rank(node.get()), node_size = Size(node.get());
  AllocWindow w(kInts * sizeof(int), sizeof(int), MPI_INFO_NULL, node.get());
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  ASSERT_TRUE(IsManaged(w.win()));
  MPI_Win_set_errhandler(w.win(), MPI_ERRORS_RETURN);
  int* mem = w.base<int>();
  for (int i = 0; i < kInts; ++i) mem[i] = WindowValue(node_rank, i);
  MPI_Barrier(node.get());
  std::vector<int> origin(kInts, 3), result(kInts, kGetSentinel);
  int compare = WindowValue(0, 0);
  ASSERT_EQ(MPI_Win_lock_all(0, w.win()), MPI_SUCCESS);
  for (int t = 0; t < node_size; ++t) {
    EXPECT_EQ(ErrorClass(MPI_Accumulate(origin.data(), 2, MPI_INT, t, kInts - 1,
                                        2, MPI_INT, MPI_SUM, w.win())),
              MPI_ERR_RMA_RANGE)
        << "accumulate, node rank " << t;
    EXPECT_EQ(ErrorClass(MPI_Get_accumulate(origin.data(), 1, MPI_INT,
                                            result.data(), 1, MPI_INT, t, kInts,
                                            1, MPI_INT, MPI_REPLACE, w.win())),
              MPI_ERR_RMA_RANGE)
        << "get_accumulate, node rank " << t;
    EXPECT_EQ(ErrorClass(MPI_Fetch_and_op(origin.data(), result.data(), MPI_INT,
                                          t, kInts, MPI_SUM, w.win())),
              MPI_ERR_RMA_RANGE)
        << "fetch_and_op, node rank " << t;
    EXPECT_EQ(
        ErrorClass(MPI_Compare_and_swap(origin.data(), &compare, result.data(),
                                        MPI_INT, t, kInts + 3, w.win())),
        MPI_ERR_RMA_RANGE)
        << "compare_and_swap, node rank " << t;
  }
  ASSERT_EQ(MPI_Win_unlock_all(w.win()), MPI_SUCCESS);
  for (int i = 0; i < kInts; ++i) EXPECT_EQ(result[i], kGetSentinel);
  MPI_Barrier(node.get());
  for (int i = 0; i < kInts; ++i) {
    EXPECT_EQ(mem[i], WindowValue(node_rank, i)) << "int " << i;
  }
}

// A handler made with MPI_Win_create_errhandler sees the window and the
// class of each failure, and the call still returns the error.
struct HandlerLog {
  int calls = 0;
  MPI_Win win = MPI_WIN_NULL;
  int last_class = MPI_SUCCESS;
};
HandlerLog g_handler_log;

void RecordingHandler(MPI_Win* win, int* code, ...) {
  ++g_handler_log.calls;
  g_handler_log.win = *win;
  g_handler_log.last_class = ErrorClass(*code);
}

TEST(ShimErrorTest, CustomErrorHandlerSeesTheClass) {
  const int size = Size();
  const int next = (Rank() + 1) % size;
  const MPI_Win win = g_windows->managed->win();
  ASSERT_TRUE(IsManaged(win));
  MPI_Errhandler handler;
  ASSERT_EQ(MPI_Win_create_errhandler(RecordingHandler, &handler), MPI_SUCCESS);
  ASSERT_EQ(MPI_Win_set_errhandler(win, handler), MPI_SUCCESS);
  MPI_Errhandler got_handler;
  MPI_Win_get_errhandler(win, &got_handler);
  EXPECT_EQ(got_handler, handler);
  MPI_Errhandler_free(&got_handler);
  int got = kGetSentinel;

  struct Step {
    const char* what;
    int expected_class;
  };
  const int value = 1;
  auto expect_handled = [&](int rc, const Step& step) {
    EXPECT_EQ(ErrorClass(rc), step.expected_class) << step.what;
    EXPECT_EQ(g_handler_log.calls, 1) << step.what;
    EXPECT_EQ(g_handler_log.win, win) << step.what;
    EXPECT_EQ(g_handler_log.last_class, step.expected_class) << step.what;
    g_handler_log = {};
  };
  g_handler_log = {};
  expect_handled(MPI_Win_unlock(next, win),
                 {"unlock without lock", MPI_ERR_RMA_SYNC});
  ASSERT_EQ(MPI_Win_lock_all(0, win), MPI_SUCCESS);
  EXPECT_EQ(g_handler_log.calls, 0);
  expect_handled(MPI_Put(&value, 1, MPI_INT, next, kInts, 1, MPI_INT, win),
                 {"put past the end", MPI_ERR_RMA_RANGE});
  expect_handled(MPI_Put(&value, 1, MPI_INT, size, 0, 1, MPI_INT, win),
                 {"put to rank size", MPI_ERR_RANK});
  expect_handled(
      MPI_Accumulate(&value, 1, MPI_INT, size, 0, 1, MPI_INT, MPI_SUM, win),
      {"accumulate to rank size", MPI_ERR_RANK});
  expect_handled(MPI_Get(&got, 1, MPI_INT, next, -1, 1, MPI_INT, win),
                 {"get at a negative displacement", MPI_ERR_DISP});
  // A correct call does not reach the handler.
  EXPECT_EQ(MPI_Put(&value, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win),
            MPI_SUCCESS);
  EXPECT_EQ(g_handler_log.calls, 0);
  ASSERT_EQ(MPI_Win_unlock_all(win), MPI_SUCCESS);
  EXPECT_EQ(got, kGetSentinel);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);  // as the other tests expect
  MPI_Errhandler_free(&handler);
  ExpectWindowUntouchedAndRestore("custom handler");
}

}  // namespace
}  // namespace rmashim_test::error
