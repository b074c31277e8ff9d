// The completion variants of shim_request_util.h.
#include "tests/mpi/shim_request_util.h"

#include <gtest/gtest.h>

#include "tests/mpi_test_util.h"

namespace rmashim_test::request {

const char* Name(Completion c) {
  switch (c) {
    case Completion::kWait:
      return "Wait";
    case Completion::kTest:
      return "Test";
    case Completion::kWaitall:
      return "Waitall";
    case Completion::kTestall:
      return "Testall";
    case Completion::kWaitany:
      return "Waitany";
    case Completion::kTestany:
      return "Testany";
    case Completion::kWaitsome:
      return "Waitsome";
    case Completion::kTestsome:
      return "Testsome";
    case Completion::kGetStatusThenWait:
      return "GetStatusThenWait";
    case Completion::kFree:
      return "Free";
  }
  return "Unknown";
}

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
      EXPECT_EQ(MPI_Waitall(n, requests.data(), statuses.data()), MPI_SUCCESS);
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
                EXPECT_EQ(
                    MPI_Testany(n, requests.data(), &index, &flag, &status),
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
          EXPECT_EQ(MPI_Waitsome(n, requests.data(), &outcount, indices.data(),
                                 some.data()),
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
              EXPECT_EQ(
                  MPI_Request_get_status(requests[i], &flag, &statuses[i]),
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
    EXPECT_EQ(seen[i], want)
        << Name(how) << " reported request " << i << " " << seen[i] << " times";
  }
  return ok;
}

}  // namespace rmashim_test::request
