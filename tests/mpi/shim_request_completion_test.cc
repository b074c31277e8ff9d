// Request-based RMA (MPI_Rput, MPI_Rget, MPI_Raccumulate,
// MPI_Rget_accumulate) on managed windows to every target, mixed with
// point-to-point requests in one array and completed through every wait and
// test variant, MPI_Request_get_status and MPI_Request_free; data and
// statuses are checked.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "tests/mpi/shim_request_util.h"
#include "tests/mpi_test_util.h"

namespace rmashim_test::request {
namespace {

constexpr int kMsg = 5;  // ints per point-to-point message

// Window cells per rank, in int64: a read-only area every origin Rgets
// from, one put slot per origin, one accumulate counter, one
// get_accumulate counter.
struct Layout {
  int size;
  int ReadOnly() const { return 0; }
  int PutSlot(int origin) const { return 1 + origin; }
  int AccCounter() const { return 1 + size; }
  int GaccCounter() const { return 2 + size; }
  int Cells() const { return 3 + size; }
};

int64_t ReadOnlyValue(int target) { return 7000 + target; }
int64_t Stamp(int origin, int target, int batch) {
  return int64_t{batch} * 10000 + origin * 100 + target;
}

// One window for every variant: window creation dominates otherwise.
class RequestTest : public testing::TestWithParam<Completion> {
 protected:
  static void SetUpTestSuite() {
    window_ = new AllocWindow(Layout{Size()}.Cells() * sizeof(int64_t),
                              sizeof(int64_t));
  }
  static void TearDownTestSuite() {
    delete window_;
    window_ = nullptr;
  }
  static AllocWindow* window_;
};
AllocWindow* RequestTest::window_ = nullptr;

// Each origin issues all four request-based operations to every target
// (self, node-local and remote alike) plus a point-to-point exchange with
// its ring neighbours, and completes them all in one array with the
// variant under test. Data and point-to-point statuses are checked.
TEST_P(RequestTest, RmaAndPointToPointRequestsComplete) {
  const Completion how = GetParam();
  const int rank = Rank(), size = Size();
  const Layout lay{size};
  AllocWindow& w = *window_;
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int64_t* mem = w.base<int64_t>();
  MPI_Barrier(MPI_COMM_WORLD);  // the previous variant has checked
  std::fill(mem, mem + lay.Cells(), 0);
  mem[lay.ReadOnly()] = ReadOnlyValue(rank);
  MPI_Barrier(MPI_COMM_WORLD);
  // Native MPICH cannot free its RMA requests (MPI_Request_free aborts on
  // them); only those the shim completed at once (node-local put/get, and
  // every operation of a single-node window) are freed.
  const bool single_node = rmashim_test::AllOnOneNode(MPI_COMM_WORLD);
  const std::vector<bool> local = rmashim_test::NodeLocalRanks();
  auto freeable = [&](const std::string& op, int target) {
    return single_node || (local[target] && (op == "rput" || op == "rget"));
  };

  constexpr int kBatches = 2;
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  std::vector<int64_t> got(size * kBatches, -1), fetched(size * kBatches, -1);
  std::vector<int64_t> stamps(size * kBatches);
  ASSERT_EQ(MPI_Win_lock_all(0, w.win()), MPI_SUCCESS);
  for (int batch = 0; batch < kBatches; ++batch) {
    std::vector<MPI_Request> requests;
    std::vector<std::string> what;
    std::vector<int> target_of;
    std::vector<int> in(kMsg, -1), out(kMsg);
    std::iota(out.begin(), out.end(), rank * 1000 + batch * 10);
    MPI_Request r;
    // Point-to-point first, so their completion is mixed in between.
    MPI_Irecv(in.data(), kMsg, MPI_INT, left, kTag + batch, MPI_COMM_WORLD, &r);
    requests.push_back(r);
    what.push_back("irecv");
    target_of.push_back(left);
    const int64_t add = rank + 1;
    for (int k = 0; k < size; ++k) {
      const int t = (rank + k) % size;
      const int slot = batch * size + t;
      stamps[slot] = Stamp(rank, t, batch);
      EXPECT_EQ(MPI_Rput(&stamps[slot], 1, MPI_INT64_T, t, lay.PutSlot(rank), 1,
                         MPI_INT64_T, w.win(), &r),
                MPI_SUCCESS);
      requests.push_back(r);
      what.push_back("rput");
      target_of.push_back(t);
      EXPECT_EQ(MPI_Rget(&got[slot], 1, MPI_INT64_T, t, lay.ReadOnly(), 1,
                         MPI_INT64_T, w.win(), &r),
                MPI_SUCCESS);
      requests.push_back(r);
      what.push_back("rget");
      target_of.push_back(t);
      EXPECT_EQ(MPI_Raccumulate(&add, 1, MPI_INT64_T, t, lay.AccCounter(), 1,
                                MPI_INT64_T, MPI_SUM, w.win(), &r),
                MPI_SUCCESS);
      requests.push_back(r);
      what.push_back("raccumulate");
      target_of.push_back(t);
      EXPECT_EQ(MPI_Rget_accumulate(&add, 1, MPI_INT64_T, &fetched[slot], 1,
                                    MPI_INT64_T, t, lay.GaccCounter(), 1,
                                    MPI_INT64_T, MPI_SUM, w.win(), &r),
                MPI_SUCCESS);
      requests.push_back(r);
      what.push_back("rget_accumulate");
      target_of.push_back(t);
    }
    MPI_Isend(out.data(), kMsg, MPI_INT, right, kTag + batch, MPI_COMM_WORLD,
              &r);
    requests.push_back(r);
    what.push_back("isend");
    target_of.push_back(right);
    requests.push_back(MPI_REQUEST_NULL);  // inactive entries are skipped
    what.push_back("null");
    target_of.push_back(MPI_PROC_NULL);

    std::vector<MPI_Status> statuses;
    if (how == Completion::kFree) {
      // Free what may be freed; the rest (point-to-point among them) is
      // waited for. The epoch's flush completes the freed operations.
      std::vector<MPI_Request> freed, waited;
      for (size_t i = 0; i < requests.size(); ++i) {
        const bool rma =
            what[i] != "irecv" && what[i] != "isend" && what[i] != "null";
        (rma && freeable(what[i], target_of[i]) ? freed : waited)
            .push_back(requests[i]);
      }
      ASSERT_TRUE(Complete(how, freed, statuses));
      ASSERT_EQ(MPI_Waitall(static_cast<int>(waited.size()), waited.data(),
                            MPI_STATUSES_IGNORE),
                MPI_SUCCESS);
      ASSERT_EQ(MPI_Win_flush_all(w.win()), MPI_SUCCESS);
    } else {
      ASSERT_TRUE(Complete(how, requests, statuses))
          << Name(how) << ": requests did not complete in time";
      // The receive's status describes the message.
      EXPECT_EQ(statuses[0].MPI_SOURCE, left);
      EXPECT_EQ(statuses[0].MPI_TAG, kTag + batch);
      int count = -1;
      MPI_Get_count(&statuses[0], MPI_INT, &count);
      EXPECT_EQ(count, kMsg);
      for (size_t i = 0; i + 1 < statuses.size(); ++i) {
        int cancelled = -1;
        MPI_Test_cancelled(&statuses[i], &cancelled);
        EXPECT_EQ(cancelled, 0) << what[i];
      }
    }
    for (int i = 0; i < kMsg; ++i) {
      EXPECT_EQ(in[i], left * 1000 + batch * 10 + i) << Name(how);
    }
    // Local completion: Rget and Rget_accumulate results are in place.
    for (int t = 0; t < size; ++t) {
      EXPECT_EQ(got[batch * size + t], ReadOnlyValue(t))
          << Name(how) << " rget from " << t;
      const int64_t f = fetched[batch * size + t];
      EXPECT_GE(f, 0) << Name(how) << " rget_accumulate from " << t;
      EXPECT_LE(f, int64_t{kBatches} * size * (size + 1) / 2 - (rank + 1))
          << Name(how) << " rget_accumulate from " << t;
    }
  }
  ASSERT_EQ(MPI_Win_unlock_all(w.win()), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  const int64_t total = int64_t{kBatches} * size * (size + 1) / 2;
  EXPECT_EQ(mem[lay.AccCounter()], total) << Name(how);
  EXPECT_EQ(mem[lay.GaccCounter()], total) << Name(how);
  EXPECT_EQ(mem[lay.ReadOnly()], ReadOnlyValue(rank));
  for (int o = 0; o < size; ++o) {
    EXPECT_EQ(mem[lay.PutSlot(o)], Stamp(o, rank, kBatches - 1))
        << Name(how) << " put from " << o;
  }
  // Get_accumulate tickets at each target: distinct multiples summing up.
  std::vector<int64_t> all(size * kBatches * size);
  MPI_Allgather(fetched.data(), size * kBatches, MPI_INT64_T, all.data(),
                size * kBatches, MPI_INT64_T, MPI_COMM_WORLD);
  for (int t = 0; t < size; ++t) {
    std::vector<int64_t> at_t;
    for (int o = 0; o < size; ++o) {
      for (int b = 0; b < kBatches; ++b) {
        at_t.push_back(all[o * size * kBatches + b * size + t]);
      }
    }
    std::sort(at_t.begin(), at_t.end());
    EXPECT_EQ(std::adjacent_find(at_t.begin(), at_t.end()), at_t.end())
        << "two get_accumulates at " << t << " saw the same value";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Completions, RequestTest,
    testing::Values(Completion::kWait, Completion::kTest, Completion::kWaitall,
                    Completion::kTestall, Completion::kWaitany,
                    Completion::kTestany, Completion::kWaitsome,
                    Completion::kTestsome, Completion::kGetStatusThenWait,
                    Completion::kFree),
    [](const testing::TestParamInfo<Completion>& info) {
      return std::string(Name(info.param));
    });

}  // namespace
}  // namespace rmashim_test::request
