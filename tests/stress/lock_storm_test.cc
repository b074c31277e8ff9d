// Lock storms: many oversubscribed ranks hammer passive-target locks on one
// window. Mutual exclusion is checked through data: every exclusive holder
// does a deliberately non-atomic read-modify-write (MPI_Get, flush, MPI_Put),
// so two holders at once lose an update or read a value twice; shared-lock
// readers check an invariant that only holds outside a writer's critical
// section; MPI_Fetch_and_op tickets under lock_all must be unique.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AllocWindow;
using rmashim_test::AllOnOneNode;
using rmashim_test::HangWatchdog;
using rmashim_test::IsManaged;
using rmashim_test::Rank;
using rmashim_test::Size;

// A storm that takes longer than this is stuck: fail with a message well
// before mpirun's MPIEXEC_TIMEOUT.
constexpr double kWatchdogSeconds = 100.0;

// Rounds per rank. A window spanning (simulated) nodes uses MPICH's own
// locks, which take milliseconds per operation on oversubscribed ranks.
int Rounds(int single_node, int split) {
  return AllOnOneNode(MPI_COMM_WORLD) ? single_node : split;
}

// Checks that `mine` (each rank's values, the same count on every rank)
// gathered over all ranks is exactly 0 .. total-1: no value seen twice or
// never.
void ExpectPermutation(const std::vector<int64_t>& mine, const char* what) {
  const int size = Size();
  std::vector<int64_t> all(mine.size() * size);
  MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T,
                all.data(), static_cast<int>(mine.size()), MPI_INT64_T,
                MPI_COMM_WORLD);
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_EQ(all[i], static_cast<int64_t>(i))
        << what << ": a value was seen twice or never";
  }
}

// Every rank takes MPI_LOCK_EXCLUSIVE on rank 0 over and over and
// increments a counter there with get, flush, put. The counter must end at
// ranks x rounds and every intermediate value must have been read exactly
// once.
TEST(LockStormTest, ExclusiveGetPutCounterOnOneTarget) {
  const int rank = Rank(), size = Size();
  const int rounds = Rounds(150, 12);
  HangWatchdog watchdog(kWatchdogSeconds, "exclusive lock storm");
  AllocWindow w(2 * sizeof(int64_t), sizeof(int64_t));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int64_t* mem = w.base<int64_t>();
  mem[0] = 0;
  mem[1] = -1;  // who is inside the critical section (-1: nobody)
  MPI_Barrier(MPI_COMM_WORLD);

  std::vector<int64_t> seen;
  int intruders = 0;
  for (int i = 0; i < rounds; ++i) {
    ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win()), MPI_SUCCESS);
    int64_t cell[2] = {-7, -7};
    ASSERT_EQ(MPI_Get(cell, 2, MPI_INT64_T, 0, 0, 2, MPI_INT64_T, w.win()),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_flush(0, w.win()), MPI_SUCCESS);
    intruders += cell[1] != -1;
    const int64_t inside = rank;
    ASSERT_EQ(MPI_Put(&inside, 1, MPI_INT64_T, 0, 1, 1, MPI_INT64_T, w.win()),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_flush(0, w.win()), MPI_SUCCESS);
    // Give the core away now and then while holding the lock, so waiters
    // run (and would slip in) while the holder is between get and put.
    if (i % 4 == rank % 4) sched_yield();
    seen.push_back(cell[0]);
    const int64_t next[2] = {cell[0] + 1, -1};
    ASSERT_EQ(MPI_Put(next, 2, MPI_INT64_T, 0, 0, 2, MPI_INT64_T, w.win()),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_unlock(0, w.win()), MPI_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(intruders, 0) << "found another holder inside the lock";
  if (rank == 0) {
    EXPECT_EQ(mem[0], int64_t{size} * rounds) << "lost update";
    EXPECT_EQ(mem[1], -1);
  }
  ExpectPermutation(seen, "counter");
}

// Shared and exclusive locks mixed, on every target. Each target holds two
// words that are equal outside a writer's critical section; a writer (one
// round in four) bumps the first, flushes, yields, then bumps the second.
// Readers under MPI_LOCK_SHARED and writers must never see them differ,
// and each target's words must end at the number of writes aimed at it.
TEST(LockStormTest, SharedAndExclusiveMix) {
  const int rank = Rank(), size = Size();
  const int rounds = Rounds(160, 12);
  HangWatchdog watchdog(kWatchdogSeconds, "shared/exclusive lock mix");
  AllocWindow w(2 * sizeof(int64_t), sizeof(int64_t));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int64_t* mem = w.base<int64_t>();
  mem[0] = mem[1] = 0;
  MPI_Barrier(MPI_COMM_WORLD);

  auto target_of = [&](int origin, int i) { return (origin + i / 3) % size; };
  auto writes = [&](int origin, int i) { return (origin + i) % 4 == 0; };
  int torn = 0, reads = 0;
  for (int i = 0; i < rounds; ++i) {
    const int target = target_of(rank, i);
    const bool write = writes(rank, i);
    ASSERT_EQ(MPI_Win_lock(write ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, target,
                           0, w.win()),
              MPI_SUCCESS);
    int64_t pair[2] = {-1, -2};
    ASSERT_EQ(MPI_Get(pair, 2, MPI_INT64_T, target, 0, 2, MPI_INT64_T, w.win()),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Win_flush(target, w.win()), MPI_SUCCESS);
    torn += pair[0] != pair[1];
    ++reads;
    if (write) {
      const int64_t next = pair[0] + 1;
      ASSERT_EQ(
          MPI_Put(&next, 1, MPI_INT64_T, target, 0, 1, MPI_INT64_T, w.win()),
          MPI_SUCCESS);
      ASSERT_EQ(MPI_Win_flush(target, w.win()), MPI_SUCCESS);
      sched_yield();  // readers would see the pair torn now
      ASSERT_EQ(
          MPI_Put(&next, 1, MPI_INT64_T, target, 1, 1, MPI_INT64_T, w.win()),
          MPI_SUCCESS);
    }
    ASSERT_EQ(MPI_Win_unlock(target, w.win()), MPI_SUCCESS);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(reads, rounds);
  EXPECT_EQ(torn, 0) << "a reader or writer overlapped a writer";
  int64_t expected = 0;
  for (int o = 0; o < size; ++o) {
    for (int i = 0; i < rounds; ++i) {
      expected += target_of(o, i) == rank && writes(o, i);
    }
  }
  EXPECT_GT(expected, 0);
  EXPECT_EQ(mem[0], expected) << "lost update";
  EXPECT_EQ(mem[1], expected) << "lost update";
}

// MPI_Fetch_and_op counters under lock_all: every rank draws tickets from
// every target in turn (cell 0, +1) and adds its weight (cell 1, rank + 1).
// Tickets per target must be exactly 0 .. k-1 and the sums exact.
TEST(LockStormTest, FetchAndOpCountersUnderLockAll) {
  const int rank = Rank(), size = Size();
  const int rounds = Rounds(400, 40);
  HangWatchdog watchdog(kWatchdogSeconds, "fetch_and_op storm");
  AllocWindow w(2 * sizeof(int64_t), sizeof(int64_t));
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int64_t* mem = w.base<int64_t>();
  mem[0] = mem[1] = 0;
  MPI_Barrier(MPI_COMM_WORLD);

  auto target_of = [&](int origin, int i) { return (origin * 7 + i) % size; };
  // (target, ticket) pairs.
  std::vector<int64_t> tickets;
  ASSERT_EQ(MPI_Win_lock_all(0, w.win()), MPI_SUCCESS);
  for (int i = 0; i < rounds; ++i) {
    const int target = target_of(rank, i);
    const int64_t one = 1, weight = rank + 1;
    int64_t ticket = -1, before = -1;
    ASSERT_EQ(MPI_Fetch_and_op(&one, &ticket, MPI_INT64_T, target, 0, MPI_SUM,
                               w.win()),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Fetch_and_op(&weight, &before, MPI_INT64_T, target, 1,
                               MPI_SUM, w.win()),
              MPI_SUCCESS);
    if (i % 16 == 0) sched_yield();
    ASSERT_EQ(MPI_Win_flush(target, w.win()), MPI_SUCCESS);
    EXPECT_GE(before, 0);
    tickets.push_back(target);
    tickets.push_back(ticket);
  }
  ASSERT_EQ(MPI_Win_unlock_all(w.win()), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);

  int64_t count = 0, weight_sum = 0;
  for (int o = 0; o < size; ++o) {
    for (int i = 0; i < rounds; ++i) {
      if (target_of(o, i) == rank) {
        ++count;
        weight_sum += o + 1;
      }
    }
  }
  EXPECT_GT(count, 0);
  EXPECT_EQ(mem[0], count) << "lost fetch_and_op";
  EXPECT_EQ(mem[1], weight_sum) << "lost fetch_and_op";
  std::vector<int64_t> all(tickets.size() * size);
  MPI_Allgather(tickets.data(), static_cast<int>(tickets.size()), MPI_INT64_T,
                all.data(), static_cast<int>(tickets.size()), MPI_INT64_T,
                MPI_COMM_WORLD);
  std::vector<int64_t> here;
  for (size_t i = 0; i < all.size(); i += 2) {
    if (all[i] == rank) here.push_back(all[i + 1]);
  }
  std::sort(here.begin(), here.end());
  ASSERT_EQ(static_cast<int64_t>(here.size()), count);
  for (size_t i = 0; i < here.size(); ++i) {
    ASSERT_EQ(here[i], static_cast<int64_t>(i)) << "repeated ticket";
  }
}

}  // namespace
