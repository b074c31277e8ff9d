// MPI_THREAD_MULTIPLE under load: 4 threads per rank issue puts,
// accumulates and fetch_and_ops to every rank at once, each thread on a
// window of its own (its own lock_all epoch) and all threads together on
// one window shared by the rank's threads (one lock_all epoch for all).
// No update may be lost, tickets must be unique, every put must land.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AllOnOneNode;
using rmashim_test::HangWatchdog;
using rmashim_test::IsManaged;
using rmashim_test::Rank;
using rmashim_test::Size;

constexpr int kThreads = 4;
constexpr double kWatchdogSeconds = 150.0;

int64_t Stamp(int origin, int thread, int round) {
  return int64_t{origin + 1} * 1000000 + thread * 1000 + round;
}

// Checks that the tickets this rank's window cell handed out over all ranks
// are exactly 0 .. count-1. `mine` holds (target, ticket) pairs.
void ExpectUniqueTickets(const std::vector<int64_t>& mine, int64_t count,
                         const char* what) {
  const int rank = Rank(), size = Size();
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(size), displs(size);
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[r] = total;
    total += counts[r];
  }
  std::vector<int64_t> all(total);
  MPI_Allgatherv(mine.data(), n, MPI_INT64_T, all.data(), counts.data(),
                 displs.data(), MPI_INT64_T, MPI_COMM_WORLD);
  std::vector<int64_t> here;
  for (size_t i = 0; i < all.size(); i += 2) {
    if (all[i] == rank) here.push_back(all[i + 1]);
  }
  std::sort(here.begin(), here.end());
  ASSERT_EQ(static_cast<int64_t>(here.size()), count) << what;
  for (size_t i = 0; i < here.size(); ++i) {
    ASSERT_EQ(here[i], static_cast<int64_t>(i)) << what << ": repeated ticket";
  }
}

TEST(ThreadsStressTest, OwnAndSharedWindowsFromFourThreads) {
  int provided = -1;
  MPI_Query_thread(&provided);
  ASSERT_EQ(provided, MPI_THREAD_MULTIPLE);
  HangWatchdog watchdog(kWatchdogSeconds, "threads stress");
  const int rank = Rank(), size = Size();
  // MPICH's own atomics serve windows spanning nodes: slower. Runs with
  // more ranks than cores set fewer rounds (STRESS_ROUNDS).
  const int rounds = rmashim_test::EnvInt(
      "STRESS_ROUNDS", AllOnOneNode(MPI_COMM_WORLD) ? 60 : 8);

  // Layout of every window (int64 cells): 0 accumulate counter, 1 ticket
  // counter, then one put slot per (origin, thread, round).
  const int cells = 2 + size * kThreads * rounds;
  auto slot = [&](int o, int t, int k) {
    return 2 + (o * kThreads + t) * rounds + k;
  };
  auto make_window = [&](int64_t** mem, MPI_Win* win) {
    ASSERT_EQ(MPI_Win_allocate(cells * sizeof(int64_t), sizeof(int64_t),
                               MPI_INFO_NULL, MPI_COMM_WORLD, mem, win),
              MPI_SUCCESS);
    EXPECT_TRUE(IsManaged(*win));
    std::fill(*mem, *mem + cells, -1);
    (*mem)[0] = (*mem)[1] = 0;
  };
  std::vector<MPI_Win> own(kThreads);
  std::vector<int64_t*> own_mem(kThreads);
  for (int t = 0; t < kThreads; ++t) make_window(&own_mem[t], &own[t]);
  MPI_Win shared;
  int64_t* shared_mem = nullptr;
  make_window(&shared_mem, &shared);
  MPI_Barrier(MPI_COMM_WORLD);

  std::vector<std::vector<int64_t>> own_tickets(kThreads),
      shared_tickets(kThreads);
  std::vector<int> errors(kThreads, 0);
  ASSERT_EQ(MPI_Win_lock_all(0, shared), MPI_SUCCESS);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      int& err = errors[t];
      MPI_Win mine = own[t];
      err += MPI_Win_lock_all(0, mine) != MPI_SUCCESS;
      for (int k = 0; k < rounds; ++k) {
        for (int i = 0; i < size; ++i) {
          const int target = (rank + t + k + i) % size;
          const int64_t one = 1, weight = t + 1, value = Stamp(rank, t, k);
          int64_t ticket = -1;
          // Own window: counter, ticket, put.
          err += MPI_Accumulate(&one, 1, MPI_INT64_T, target, 0, 1, MPI_INT64_T,
                                MPI_SUM, mine) != MPI_SUCCESS;
          err += MPI_Fetch_and_op(&one, &ticket, MPI_INT64_T, target, 1,
                                  MPI_SUM, mine) != MPI_SUCCESS;
          err += MPI_Put(&value, 1, MPI_INT64_T, target, slot(rank, t, k), 1,
                         MPI_INT64_T, mine) != MPI_SUCCESS;
          err += MPI_Win_flush(target, mine) != MPI_SUCCESS;
          own_tickets[t].push_back(target);
          own_tickets[t].push_back(ticket);
          // Shared window: the same, with weights, all threads at once.
          int64_t shared_ticket = -1;
          err += MPI_Accumulate(&weight, 1, MPI_INT64_T, target, 0, 1,
                                MPI_INT64_T, MPI_SUM, shared) != MPI_SUCCESS;
          err += MPI_Fetch_and_op(&one, &shared_ticket, MPI_INT64_T, target, 1,
                                  MPI_SUM, shared) != MPI_SUCCESS;
          err += MPI_Put(&value, 1, MPI_INT64_T, target, slot(rank, t, k), 1,
                         MPI_INT64_T, shared) != MPI_SUCCESS;
          err += MPI_Win_flush(target, shared) != MPI_SUCCESS;
          shared_tickets[t].push_back(target);
          shared_tickets[t].push_back(shared_ticket);
        }
      }
      err += MPI_Win_unlock_all(mine) != MPI_SUCCESS;
    });
  }
  for (std::thread& th : threads) th.join();
  ASSERT_EQ(MPI_Win_unlock_all(shared), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], 0) << "thread " << t;

  // Every origin's every thread reaches every target once per round.
  const int64_t per_window = int64_t{size} * rounds;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(own_mem[t][0], per_window) << "lost accumulate, thread " << t;
    EXPECT_EQ(own_mem[t][1], per_window) << "lost fetch_and_op, thread " << t;
  }
  // Weights 1..kThreads from each origin and round.
  EXPECT_EQ(shared_mem[0], per_window * kThreads * (kThreads + 1) / 2)
      << "lost accumulate";
  EXPECT_EQ(shared_mem[1], per_window * kThreads) << "lost fetch_and_op";
  int bad = 0;
  for (int o = 0; o < size; ++o) {
    for (int t = 0; t < kThreads; ++t) {
      for (int k = 0; k < rounds; ++k) {
        bad += shared_mem[slot(o, t, k)] != Stamp(o, t, k);
        for (int u = 0; u < kThreads; ++u) {
          const int64_t want = u == t ? Stamp(o, t, k) : -1;
          bad += own_mem[u][slot(o, t, k)] != want;
        }
      }
    }
  }
  EXPECT_EQ(bad, 0) << "puts missing or misplaced";
  for (int t = 0; t < kThreads; ++t) {
    ExpectUniqueTickets(own_tickets[t], per_window, "own window");
  }
  std::vector<int64_t> flat;
  for (const auto& v : shared_tickets)
    flat.insert(flat.end(), v.begin(), v.end());
  ExpectUniqueTickets(flat, per_window * kThreads, "shared window");
  MPI_Barrier(MPI_COMM_WORLD);
  for (int t = 0; t < kThreads; ++t) MPI_Win_free(&own[t]);
  MPI_Win_free(&shared);
}

}  // namespace
