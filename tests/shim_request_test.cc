// Request-based RMA (MPI_Rput, MPI_Rget, MPI_Raccumulate,
// MPI_Rget_accumulate) on managed windows, completed through every wait
// and test variant, alone and in arrays with point-to-point requests;
// MPI_Request_free and MPI_Request_get_status; statuses; and
// MPI_ERR_RMA_SYNC outside passive-target epochs.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AllocWindow;
using rmashim_test::ErrorClass;
using rmashim_test::IsManaged;
using rmashim_test::PollUntil;
using rmashim_test::Rank;
using rmashim_test::Size;

constexpr double kTimeoutSeconds = 5.0;
constexpr int kTag = 42;
constexpr int kMsg = 5;  // ints per point-to-point message

// How a batch of requests is completed.
enum class Completion {
  kWait,
  kTest,
  kWaitall,
  kTestall,
  kWaitany,
  kTestany,
  kWaitsome,
  kTestsome,
  kGetStatusThenWait,
  kFree,  // MPI_Request_free; the epoch's flush completes the operations
};

const char* Name(Completion c) {
  switch (c) {
    case Completion::kWait: return "Wait";
    case Completion::kTest: return "Test";
    case Completion::kWaitall: return "Waitall";
    case Completion::kTestall: return "Testall";
    case Completion::kWaitany: return "Waitany";
    case Completion::kTestany: return "Testany";
    case Completion::kWaitsome: return "Waitsome";
    case Completion::kTestsome: return "Testsome";
    case Completion::kGetStatusThenWait: return "GetStatusThenWait";
    case Completion::kFree: return "Free";
  }
  return "Unknown";
}

// Completes `requests` the way `how` says, filling `statuses` (one per
// request, in request order) and returning whether all completed in time.
// Every handle is MPI_REQUEST_NULL afterwards.
bool Complete(Completion how, std::vector<MPI_Request>& requests,
              std::vector<MPI_Status>& statuses) {
  const int n = static_cast<int>(requests.size());
  statuses.assign(n, MPI_Status{});
  std::vector<int> seen(n, 0);  // how often each index was reported
  std::vector<bool> active(n);
  for (int i = 0; i < n; ++i) active[i] = requests[i] != MPI_REQUEST_NULL;
  // The any/some variants report active requests only.
  const bool reports_active_only =
      how == Completion::kWaitany || how == Completion::kTestany ||
      how == Completion::kWaitsome || how == Completion::kTestsome;
  bool ok = true;
  switch (how) {
    case Completion::kWait:
      for (int i = 0; i < n; ++i) {
        EXPECT_EQ(MPI_Wait(&requests[i], &statuses[i]), MPI_SUCCESS);
        ++seen[i];
      }
      break;
    case Completion::kTest:
      for (int i = 0; i < n; ++i) {
        ok &= PollUntil(
            [&] {
              int flag = 0;
              EXPECT_EQ(MPI_Test(&requests[i], &flag, &statuses[i]),
                        MPI_SUCCESS);
              return flag != 0;
            },
            kTimeoutSeconds);
        ++seen[i];
      }
      break;
    case Completion::kWaitall:
      EXPECT_EQ(MPI_Waitall(n, requests.data(), statuses.data()),
                MPI_SUCCESS);
      for (int& s : seen) ++s;
      break;
    case Completion::kTestall:
      ok = PollUntil(
          [&] {
            int flag = 0;
            EXPECT_EQ(MPI_Testall(n, requests.data(), &flag, statuses.data()),
                      MPI_SUCCESS);
            return flag != 0;
          },
          kTimeoutSeconds);
      for (int& s : seen) ++s;
      break;
    case Completion::kWaitany:
    case Completion::kTestany:
      for (int done = 0; done < n + 1 && ok; ++done) {
        int index = -5;
        MPI_Status status;
        if (how == Completion::kWaitany) {
          EXPECT_EQ(MPI_Waitany(n, requests.data(), &index, &status),
                    MPI_SUCCESS);
        } else {
          ok = PollUntil(
              [&] {
                int flag = 0;
                EXPECT_EQ(MPI_Testany(n, requests.data(), &index, &flag,
                                      &status),
                          MPI_SUCCESS);
                return flag != 0;
              },
              kTimeoutSeconds);
        }
        if (index == MPI_UNDEFINED) break;  // all inactive
        if (index < 0 || index >= n) {
          ADD_FAILURE() << "index " << index;
          return false;
        }
        ++seen[index];
        statuses[index] = status;
      }
      break;
    case Completion::kWaitsome:
    case Completion::kTestsome:
      for (int round = 0; round < n + 1 && ok; ++round) {
        int outcount = -5;
        std::vector<int> indices(n, -1);
        std::vector<MPI_Status> some(n);
        if (how == Completion::kWaitsome) {
          EXPECT_EQ(MPI_Waitsome(n, requests.data(), &outcount,
                                 indices.data(), some.data()),
                    MPI_SUCCESS);
        } else {
          ok = PollUntil(
              [&] {
                EXPECT_EQ(MPI_Testsome(n, requests.data(), &outcount,
                                       indices.data(), some.data()),
                          MPI_SUCCESS);
                return outcount != 0;
              },
              kTimeoutSeconds);
        }
        if (outcount == MPI_UNDEFINED) break;
        for (int k = 0; k < outcount; ++k) {
          if (indices[k] < 0 || indices[k] >= n) {
            ADD_FAILURE() << "index " << indices[k];
            return false;
          }
          ++seen[indices[k]];
          statuses[indices[k]] = some[k];
        }
      }
      break;
    case Completion::kGetStatusThenWait:
      for (int i = 0; i < n; ++i) {
        const MPI_Request before = requests[i];
        ok &= PollUntil(
            [&] {
              int flag = 0;
              EXPECT_EQ(MPI_Request_get_status(requests[i], &flag,
                                               &statuses[i]),
                        MPI_SUCCESS);
              return flag != 0;
            },
            kTimeoutSeconds);
        // get_status leaves the request alone; Wait frees it.
        EXPECT_EQ(requests[i], before);
        EXPECT_EQ(MPI_Wait(&requests[i], MPI_STATUS_IGNORE), MPI_SUCCESS);
        ++seen[i];
      }
      break;
    case Completion::kFree:
      for (int i = 0; i < n; ++i) {
        EXPECT_EQ(MPI_Request_free(&requests[i]), MPI_SUCCESS);
        ++seen[i];
      }
      break;
  }
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(requests[i], MPI_REQUEST_NULL) << Name(how) << " request " << i;
    const int want = reports_active_only && !active[i] ? 0 : 1;
    EXPECT_EQ(seen[i], want) << Name(how) << " reported request " << i << " "
                             << seen[i] << " times";
  }
  return ok;
}

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
    MPI_Irecv(in.data(), kMsg, MPI_INT, left, kTag + batch, MPI_COMM_WORLD,
              &r);
    requests.push_back(r);
    what.push_back("irecv");
    target_of.push_back(left);
    const int64_t add = rank + 1;
    for (int k = 0; k < size; ++k) {
      const int t = (rank + k) % size;
      const int slot = batch * size + t;
      stamps[slot] = Stamp(rank, t, batch);
      EXPECT_EQ(MPI_Rput(&stamps[slot], 1, MPI_INT64_T, t, lay.PutSlot(rank),
                         1, MPI_INT64_T, w.win(), &r),
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
        const bool rma = what[i] != "irecv" && what[i] != "isend" &&
                         what[i] != "null";
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

// Arrays of RMA requests only, with an inactive entry, under a per-target
// exclusive lock and through a strided datatype on both sides: each index
// is reported once, then MPI_UNDEFINED.
TEST(RequestArrayTest, RmaOnlyArraysUnderExclusiveLock) {
  const int rank = Rank(), size = Size();
  constexpr int kN = 12;
  // Even cells: put/get through `every_other`; cell 1: accumulated.
  AllocWindow w(2 * kN * sizeof(int), sizeof(int));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int* mem = w.base<int>();
  std::fill(mem, mem + 2 * kN, -1);
  MPI_Datatype every_other;
  MPI_Type_vector(kN, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  MPI_Barrier(MPI_COMM_WORLD);
  const int target = (rank + 1) % size;
  std::vector<int> values(kN), back(2 * kN, -2);
  std::iota(values.begin(), values.end(), rank * 100);
  const Completion kinds[] = {Completion::kWaitany, Completion::kWaitsome,
                              Completion::kTestsome, Completion::kTestany};
  ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w.win()),
            MPI_SUCCESS);
  for (Completion how : kinds) {
    std::vector<MPI_Request> requests(3, MPI_REQUEST_NULL);
    EXPECT_EQ(MPI_Rput(values.data(), kN, MPI_INT, target, 0, 1, every_other,
                       w.win(), &requests[0]),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Wait(&requests[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
    // The get must see the put: only a flush orders them.
    EXPECT_EQ(MPI_Win_flush(target, w.win()), MPI_SUCCESS);
    EXPECT_EQ(MPI_Rget(back.data(), 1, every_other, target, 0, 1, every_other,
                       w.win(), &requests[1]),
              MPI_SUCCESS);
    const int one = 1;
    EXPECT_EQ(MPI_Raccumulate(&one, 1, MPI_INT, target, 1, 1, MPI_INT,
                              MPI_SUM, w.win(), &requests[2]),
              MPI_SUCCESS);
    std::vector<MPI_Status> statuses;
    ASSERT_TRUE(Complete(how, requests, statuses)) << Name(how);
    for (int i = 0; i < kN; ++i) {
      EXPECT_EQ(back[2 * i], values[i]) << Name(how) << " element " << i;
      EXPECT_EQ(back[2 * i + 1], -2) << Name(how) << " gap " << i;
    }
    std::fill(back.begin(), back.end(), -2);
  }
  ASSERT_EQ(MPI_Win_unlock(target, w.win()), MPI_SUCCESS);
  MPI_Type_free(&every_other);
  MPI_Barrier(MPI_COMM_WORLD);
  const int origin = (rank + size - 1) % size;
  for (int i = 0; i < kN; ++i) {
    EXPECT_EQ(mem[2 * i], origin * 100 + i) << "cell " << 2 * i;
  }
  EXPECT_EQ(mem[1], -1 + static_cast<int>(std::size(kinds)));
  for (int i = 1; i < kN; ++i) EXPECT_EQ(mem[2 * i + 1], -1) << 2 * i + 1;
}

// MPI_Testall that returns false modifies no request (MPI-3.1 3.7.5), even
// when some of them (here a node-local MPI_Rput) are complete.
TEST(RequestArrayTest, TestallLeavesRequestsAloneUntilAllComplete) {
  const int rank = Rank(), size = Size();
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  AllocWindow w(sizeof(int64_t), sizeof(int64_t));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_MANAGED(w.win());
  *w.base<int64_t>() = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  ASSERT_EQ(MPI_Win_lock_all(0, w.win()), MPI_SUCCESS);
  const int64_t stamp = 500 + rank;
  int in = -1;
  MPI_Request requests[2];
  EXPECT_EQ(MPI_Rput(&stamp, 1, MPI_INT64_T, rank, 0, 1, MPI_INT64_T,
                     w.win(), &requests[0]),
            MPI_SUCCESS);
  // Nobody sends before the barrier below, so this cannot complete yet.
  MPI_Irecv(&in, 1, MPI_INT, left, kTag, MPI_COMM_WORLD, &requests[1]);
  const MPI_Request before[2] = {requests[0], requests[1]};
  int flag = -1;
  EXPECT_EQ(MPI_Testall(2, requests, &flag, MPI_STATUSES_IGNORE),
            MPI_SUCCESS);
  EXPECT_EQ(flag, 0);
  EXPECT_EQ(requests[0], before[0]) << "the completed Rput was modified";
  EXPECT_EQ(requests[1], before[1]);
  MPI_Barrier(MPI_COMM_WORLD);
  const int out = rank;
  MPI_Send(&out, 1, MPI_INT, right, kTag, MPI_COMM_WORLD);
  EXPECT_EQ(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(in, left);
  ASSERT_EQ(MPI_Win_unlock_all(w.win()), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(*w.base<int64_t>(), stamp);
}

// A request-based operation to MPI_PROC_NULL completes at once.
TEST(RequestArrayTest, ProcNullTargetCompletes) {
  AllocWindow w(sizeof(int64_t) * 2, sizeof(int64_t));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_MANAGED(w.win());
  int64_t v = 5, r = -1;
  ASSERT_EQ(MPI_Win_lock_all(0, w.win()), MPI_SUCCESS);
  // Null to start with, so a call that returns no request shows (and the
  // Testall below stays valid).
  MPI_Request q[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                      MPI_REQUEST_NULL};
  EXPECT_EQ(MPI_Rput(&v, 1, MPI_INT64_T, MPI_PROC_NULL, 0, 1, MPI_INT64_T,
                     w.win(), &q[0]),
            MPI_SUCCESS);
  EXPECT_EQ(MPI_Rget(&r, 1, MPI_INT64_T, MPI_PROC_NULL, 0, 1, MPI_INT64_T,
                     w.win(), &q[1]),
            MPI_SUCCESS);
  EXPECT_EQ(MPI_Raccumulate(&v, 1, MPI_INT64_T, MPI_PROC_NULL, 0, 1,
                            MPI_INT64_T, MPI_SUM, w.win(), &q[2]),
            MPI_SUCCESS);
  EXPECT_EQ(MPI_Rget_accumulate(&v, 1, MPI_INT64_T, &r, 1, MPI_INT64_T,
                                MPI_PROC_NULL, 0, 1, MPI_INT64_T, MPI_SUM,
                                w.win(), &q[3]),
            MPI_SUCCESS);
  const char* names[] = {"MPI_Rput", "MPI_Rget", "MPI_Raccumulate",
                         "MPI_Rget_accumulate"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NE(q[i], MPI_REQUEST_NULL) << names[i] << " returned no request";
  }
  int flag = 0;
  EXPECT_TRUE(PollUntil(
      [&] {
        EXPECT_EQ(MPI_Testall(4, q, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        return flag != 0;
      },
      kTimeoutSeconds));
  EXPECT_EQ(r, -1) << "nothing is read from MPI_PROC_NULL";
  ASSERT_EQ(MPI_Win_unlock_all(w.win()), MPI_SUCCESS);
}

// Request-based operations are valid only in passive-target epochs
// (MPI-3.1 11.3.5): with no epoch, in a fence epoch and in a PSCW epoch
// they fail with MPI_ERR_RMA_SYNC, create no request and write nothing.
// (Native MPICH checks only the no-epoch case and carries them out in
// fence and PSCW epochs.)
TEST(RequestErrorsTest, OutsidePassiveEpochIsRmaSync) {
  const int rank = Rank(), size = Size();
  AllocWindow w(4 * sizeof(int64_t), sizeof(int64_t));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  MPI_Win_set_errhandler(w.win(), MPI_ERRORS_RETURN);
  int64_t* mem = w.base<int64_t>();
  for (int i = 0; i < 4; ++i) mem[i] = 100 * rank + i;
  MPI_Group world, self;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &rank, &self);
  MPI_Barrier(MPI_COMM_WORLD);
  const int target = (rank + 1) % size;
  enum class Epoch { kNone, kFence, kPscw };
  for (Epoch epoch : {Epoch::kNone, Epoch::kFence, Epoch::kPscw}) {
    // PSCW: an epoch on self, so the call is refused for its kind, not
    // for its target.
    const int t = epoch == Epoch::kPscw ? rank : target;
    if (epoch == Epoch::kFence) MPI_Win_fence(0, w.win());
    if (epoch == Epoch::kPscw) {
      MPI_Win_post(self, 0, w.win());
      MPI_Win_start(self, 0, w.win());
    }
    const int64_t v = -7;
    int64_t r = -9;
    std::vector<std::pair<const char*, std::function<int(MPI_Request*)>>>
        calls = {
            {"MPI_Rput",
             [&](MPI_Request* q) {
               return MPI_Rput(&v, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T,
                               w.win(), q);
             }},
            {"MPI_Rget",
             [&](MPI_Request* q) {
               return MPI_Rget(&r, 1, MPI_INT64_T, t, 1, 1, MPI_INT64_T,
                               w.win(), q);
             }},
            {"MPI_Raccumulate",
             [&](MPI_Request* q) {
               return MPI_Raccumulate(&v, 1, MPI_INT64_T, t, 2, 1,
                                      MPI_INT64_T, MPI_SUM, w.win(), q);
             }},
            {"MPI_Rget_accumulate",
             [&](MPI_Request* q) {
               return MPI_Rget_accumulate(&v, 1, MPI_INT64_T, &r, 1,
                                          MPI_INT64_T, t, 3, 1, MPI_INT64_T,
                                          MPI_SUM, w.win(), q);
             }},
        };
    for (const auto& [name, call] : calls) {
      MPI_Request q = MPI_REQUEST_NULL;
      EXPECT_EQ(ErrorClass(call(&q)), MPI_ERR_RMA_SYNC)
          << name << " in epoch " << static_cast<int>(epoch);
      if (q != MPI_REQUEST_NULL) {
        ADD_FAILURE() << name << " returned a request";
        MPI_Wait(&q, MPI_STATUS_IGNORE);
      }
      EXPECT_EQ(r, -9) << name << " wrote the result buffer";
    }
    if (epoch == Epoch::kFence) MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win());
    if (epoch == Epoch::kPscw) {
      MPI_Win_complete(w.win());
      MPI_Win_wait(w.win());
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(mem[i], 100 * rank + i) << "cell " << i << " written";
  }
  MPI_Group_free(&self);
  MPI_Group_free(&world);
}

}  // namespace
