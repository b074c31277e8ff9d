// The shim's completed-at-issue request (a node-local MPI_Rput's) among
// real requests in the calls that report several at once: MPI_Testsome and
// MPI_Waitsome report the real requests complete by then as well as the
// shim's; MPI-4.1's MPI_Request_get_status_all/any/some and MPICH 4.3's
// MPIX_Request_is_complete answer for it and leave every request as it
// was. The real requests are generalized requests, complete exactly when
// the test says so. MPI-4.1's calls are looked up at run time: a program
// built against MPICH 4.0.2 cannot call them, and the shim then answers
// MPI_ERR_OTHER (newer_request_calls.h); against a newer MPICH
// (scripts/compat_mpich.sh) they are checked in full.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::PassedToMpi;
using rmashim_test::Rank;

int QueryStatus(void* /*extra*/, MPI_Status* status) {
  MPI_Status_set_elements(status, MPI_BYTE, 0);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}
int FreeNothing(void* /*extra*/) { return MPI_SUCCESS; }
int CancelNothing(void* /*extra*/, int /*complete*/) { return MPI_SUCCESS; }

MPI_Request Generalized() {
  MPI_Request r = MPI_REQUEST_NULL;
  EXPECT_EQ(
      MPI_Grequest_start(QueryStatus, FreeNothing, CancelNothing, nullptr, &r),
      MPI_SUCCESS);
  return r;
}

// A window whose own memory this rank reaches directly, in a lock_all
// epoch: an MPI_Rput to this rank is served at issue.
class RequestStatusTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(
        MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base_, &win_),
        MPI_SUCCESS);
    ASSERT_MANAGED(win_);
    MPI_Win_lock_all(0, win_);
  }
  void TearDown() override {
    MPI_Win_unlock_all(win_);
    EXPECT_EQ(*static_cast<int*>(base_), value_) << "the served put's data";
    EXPECT_EQ(PassedToMpi(win_), 0) << "the put went to MPI";
    MPI_Win_free(&win_);
  }
  // A request the shim completed when it issued it.
  MPI_Request ServedPut() {
    MPI_Request r = MPI_REQUEST_NULL;
    ++value_;
    EXPECT_EQ(MPI_Rput(&value_, 1, MPI_INT, Rank(), 0, 1, MPI_INT, win_, &r),
              MPI_SUCCESS);
    return r;
  }

  void* base_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
  int value_ = 0;
};

TEST_F(RequestStatusTest, TestsomeAndWaitsomeReportRealAndServedRequests) {
  for (const bool wait : {false, true}) {
    SCOPED_TRACE(wait ? "MPI_Waitsome" : "MPI_Testsome");
    std::vector<MPI_Request> r = {Generalized(), ServedPut(), Generalized()};
    ASSERT_EQ(MPI_Grequest_complete(r[0]), MPI_SUCCESS);
    int outcount = -1;
    std::vector<int> indices(3, -1);
    std::vector<MPI_Status> statuses(3);
    const int rc = wait ? MPI_Waitsome(3, r.data(), &outcount, indices.data(),
                                       statuses.data())
                        : MPI_Testsome(3, r.data(), &outcount, indices.data(),
                                       statuses.data());
    ASSERT_EQ(rc, MPI_SUCCESS);
    ASSERT_EQ(outcount, 2) << "the completed generalized request and the put";
    std::sort(indices.begin(), indices.begin() + 2);
    EXPECT_EQ(indices[0], 0);
    EXPECT_EQ(indices[1], 1);
    EXPECT_EQ(r[0], MPI_REQUEST_NULL);
    EXPECT_EQ(r[1], MPI_REQUEST_NULL);
    ASSERT_NE(r[2], MPI_REQUEST_NULL) << "an incomplete request was freed";
    // Nothing else completes until the last one does.
    ASSERT_EQ(
        MPI_Testsome(3, r.data(), &outcount, indices.data(), statuses.data()),
        MPI_SUCCESS);
    EXPECT_EQ(outcount, 0);
    ASSERT_EQ(MPI_Grequest_complete(r[2]), MPI_SUCCESS);
    ASSERT_EQ(
        MPI_Waitsome(3, r.data(), &outcount, indices.data(), statuses.data()),
        MPI_SUCCESS);
    EXPECT_EQ(outcount, 1);
    EXPECT_EQ(indices[0], 2);
    // All null now: MPI_UNDEFINED.
    ASSERT_EQ(
        MPI_Testsome(3, r.data(), &outcount, indices.data(), statuses.data()),
        MPI_SUCCESS);
    EXPECT_EQ(outcount, MPI_UNDEFINED);
  }
}

using GetStatusAll = int (*)(int, const MPI_Request[], int*, MPI_Status[]);
using GetStatusAny = int (*)(int, const MPI_Request[], int*, int*, MPI_Status*);
using GetStatusSome = int (*)(int, const MPI_Request[], int*, int[],
                              MPI_Status[]);
using IsComplete = int (*)(MPI_Request);

template <typename F>
F Find(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

TEST_F(RequestStatusTest, GetStatusCallsAnswerForServedRequests) {
  const auto all = Find<GetStatusAll>("MPI_Request_get_status_all");
  const auto any = Find<GetStatusAny>("MPI_Request_get_status_any");
  const auto some = Find<GetStatusSome>("MPI_Request_get_status_some");
  const auto is_complete = Find<IsComplete>("MPIX_Request_is_complete");
  ASSERT_NE(all, nullptr) << "the shim defines MPI_Request_get_status_all";
  ASSERT_NE(any, nullptr);
  ASSERT_NE(some, nullptr);
  ASSERT_NE(is_complete, nullptr);
  std::vector<MPI_Request> r = {ServedPut(), Generalized()};
  EXPECT_EQ(is_complete(r[0]), 1) << "a served request is complete";
  int flag = -1, index = -1, outcount = -1;
  std::vector<int> indices(2, -1);
  std::vector<MPI_Status> statuses(2);
  if (Find<GetStatusAll>("PMPI_Request_get_status_all") == nullptr) {
    // An MPI without them (4.0.2): no program built against it calls them.
    EXPECT_EQ(all(2, r.data(), &flag, statuses.data()), MPI_ERR_OTHER);
    EXPECT_EQ(any(2, r.data(), &index, &flag, statuses.data()), MPI_ERR_OTHER);
    EXPECT_EQ(some(2, r.data(), &outcount, indices.data(), statuses.data()),
              MPI_ERR_OTHER);
  } else {
    EXPECT_EQ(is_complete(r[1]), 0);
    ASSERT_EQ(all(2, r.data(), &flag, statuses.data()), MPI_SUCCESS);
    EXPECT_EQ(flag, 0) << "the generalized request is not complete";
    ASSERT_EQ(any(2, r.data(), &index, &flag, statuses.data()), MPI_SUCCESS);
    EXPECT_EQ(flag, 1);
    EXPECT_EQ(index, 0);
    ASSERT_EQ(some(2, r.data(), &outcount, indices.data(), statuses.data()),
              MPI_SUCCESS);
    ASSERT_EQ(outcount, 1);
    EXPECT_EQ(indices[0], 0);
    ASSERT_EQ(MPI_Grequest_complete(r[1]), MPI_SUCCESS);
    EXPECT_EQ(is_complete(r[1]), 1);
    ASSERT_EQ(some(2, r.data(), &outcount, indices.data(), statuses.data()),
              MPI_SUCCESS);
    EXPECT_EQ(outcount, 2);
    ASSERT_EQ(all(2, r.data(), &flag, statuses.data()), MPI_SUCCESS);
    EXPECT_EQ(flag, 1);
  }
  // Every request is as it was: still to be completed by the program.
  EXPECT_NE(r[0], MPI_REQUEST_NULL);
  EXPECT_NE(r[1], MPI_REQUEST_NULL);
  if (is_complete(r[1]) == 0) MPI_Grequest_complete(r[1]);
  ASSERT_EQ(MPI_Waitall(2, r.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
}

}  // namespace
