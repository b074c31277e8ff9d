// DART team locks (MCS queue locks): mutual exclusion protects a shared
// counter updated with plain get/put (no lost update), acquisition is FIFO,
// try_acquire (also polled while the holder reads the pollers), several
// locks per team with tails on different units, locks on sub-teams, misuse
// rejected; with the core's agent, who applied the remote steps.
#include <dart/dart.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <thread>
#include <vector>

#include "tests/dart/dart_test_util.h"

namespace {

using dart_testing::At;
using dart_testing::MyId;
using dart_testing::Rounds;
using dart_testing::Size;
using dart_testing::TeamMyId;
using dart_testing::TeamSize;

// Read-modify-write of a counter on `owner` with non-atomic get and put,
// `rounds` times under `lock`.
void IncrementUnderLock(dart_lock_t lock, dart_gptr_t counter, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    ASSERT_EQ(DART_OK, dart_lock_acquire(lock));
    int64_t v = 0;
    ASSERT_EQ(DART_OK, dart_get_blocking(&v, counter, 1, DART_TYPE_LONG,
                                         DART_TYPE_LONG));
    ++v;
    ASSERT_EQ(DART_OK, dart_put_blocking(counter, &v, 1, DART_TYPE_LONG,
                                         DART_TYPE_LONG));
    ASSERT_EQ(DART_OK, dart_lock_release(lock));
  }
}

int64_t Read(dart_gptr_t g) {
  int64_t v = -1;
  EXPECT_EQ(DART_OK,
            dart_get_blocking(&v, g, 1, DART_TYPE_LONG, DART_TYPE_LONG));
  return v;
}

dart_gptr_t ZeroedCounters(dart_team_t team, int n) {
  dart_gptr_t g;
  EXPECT_EQ(DART_OK, dart_team_memalloc_aligned(team, n, DART_TYPE_LONG, &g));
  int64_t* p = nullptr;
  dart_gptr_getaddr(At(g, TeamMyId(team)), reinterpret_cast<void**>(&p));
  for (int i = 0; i < n; ++i) p[i] = 0;
  dart_barrier(team);
  return g;
}

TEST(DartLock, NoLostUpdates) {
  dart_lock_t lock;
  ASSERT_EQ(DART_OK, dart_team_lock_init(DART_TEAM_ALL, &lock));
  const dart_gptr_t counter = At(ZeroedCounters(DART_TEAM_ALL, 1), 0);
  const int rounds = Rounds(100, 20);
  const int64_t applied = dart_testing::AgentAppliedEverywhere();
  IncrementUnderLock(lock, counter, rounds);
  dart_barrier(DART_TEAM_ALL);
  EXPECT_EQ(int64_t{rounds} * Size(), Read(counter));
  // The queue's tail is on unit 0 (a team's first lock): with the agent,
  // unit 0's agent swaps it for every acquisition of a unit on another node.
  const std::vector<bool> local = dart_testing::NodeLocalUnits();
  int64_t remote_acquisitions = 0;
  if (MyId() == 0) {
    for (bool l : local) remote_acquisitions += l ? 0 : rounds;
  }
  MPI_Bcast(&remote_acquisitions, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  const int64_t by_agents = dart_testing::AgentAppliedEverywhere() - applied;
  if (dart_testing::AgentExpected()) {
    EXPECT_GE(by_agents, remote_acquisitions);
  } else {
    EXPECT_EQ(0, by_agents);
  }
  dart_barrier(DART_TEAM_ALL);
  ASSERT_EQ(DART_OK, dart_team_memfree(counter));
  ASSERT_EQ(DART_OK, dart_team_lock_destroy(&lock));
  EXPECT_EQ(DART_LOCK_NULL, lock);
}

// Unit 0 holds the lock while the others queue up one after another (unit
// u starts waiting u * 80 ms in); each appends its id to a log when it gets
// the lock: the log must be 0, 1, 2, ... (first come, first served).
TEST(DartLock, FifoOrder) {
  dart_lock_t lock;
  ASSERT_EQ(DART_OK, dart_team_lock_init(DART_TEAM_ALL, &lock));
  const dart_gptr_t log = ZeroedCounters(DART_TEAM_ALL, Size() + 1);
  const dart_gptr_t next = At(log, 0, 8 * Size());  // log length
  dart_barrier(DART_TEAM_ALL);
  const auto tick = std::chrono::milliseconds(80);
  if (MyId() == 0) {
    ASSERT_EQ(DART_OK, dart_lock_acquire(lock));
    std::this_thread::sleep_for(tick * Size());
  } else {
    std::this_thread::sleep_for(tick * MyId());
    ASSERT_EQ(DART_OK, dart_lock_acquire(lock));
  }
  const int64_t one = 1;
  int64_t slot = 0;
  ASSERT_EQ(DART_OK,
            dart_fetch_and_op(next, &one, &slot, DART_TYPE_LONG, DART_OP_SUM));
  const int64_t me = MyId();
  ASSERT_EQ(DART_OK, dart_put_blocking(At(log, 0, 8 * slot), &me, 1,
                                       DART_TYPE_LONG, DART_TYPE_LONG));
  ASSERT_EQ(DART_OK, dart_lock_release(lock));
  dart_barrier(DART_TEAM_ALL);
  std::vector<int64_t> order(Size());
  ASSERT_EQ(DART_OK, dart_get_blocking(order.data(), At(log, 0), Size(),
                                       DART_TYPE_LONG, DART_TYPE_LONG));
  for (int u = 0; u < Size(); ++u) EXPECT_EQ(u, order[u]);
  dart_barrier(DART_TEAM_ALL);
  ASSERT_EQ(DART_OK, dart_team_memfree(log));
  ASSERT_EQ(DART_OK, dart_team_lock_destroy(&lock));
}

TEST(DartLock, TryAcquire) {
  dart_lock_t lock;
  ASSERT_EQ(DART_OK, dart_team_lock_init(DART_TEAM_ALL, &lock));
  int32_t got = -1;
  if (MyId() == 0) {
    ASSERT_EQ(DART_OK, dart_lock_try_acquire(lock, &got));
    EXPECT_EQ(1, got);
    EXPECT_EQ(DART_ERR_INVAL, dart_lock_acquire(lock));  // not recursive
  }
  dart_barrier(DART_TEAM_ALL);
  if (MyId() != 0) {
    ASSERT_EQ(DART_OK, dart_lock_try_acquire(lock, &got));
    EXPECT_EQ(0, got);
    EXPECT_EQ(DART_ERR_INVAL, dart_lock_release(lock));  // not held
  }
  dart_barrier(DART_TEAM_ALL);
  if (MyId() == 0) {
    ASSERT_EQ(DART_OK, dart_lock_release(lock));
  }
  dart_barrier(DART_TEAM_ALL);
  // Free again: exactly one unit wins a simultaneous try.
  ASSERT_EQ(DART_OK, dart_lock_try_acquire(lock, &got));
  int32_t winners = 0;
  ASSERT_EQ(DART_OK, dart_allreduce(&got, &winners, 1, DART_TYPE_INT,
                                    DART_OP_SUM, DART_TEAM_ALL));
  EXPECT_EQ(1, winners);
  if (got) {
    ASSERT_EQ(DART_OK, dart_lock_release(lock));
  }
  dart_barrier(DART_TEAM_ALL);
  ASSERT_EQ(DART_OK, dart_team_lock_destroy(&lock));
}

// Every unit in turn holds the lock and reads every unit's word with
// blocking gets while the others poll dart_lock_try_acquire. A poll served
// without MPI (the agent's: a CPU atomic on a node-local tail, a message to
// a remote one's agent) must still let MPI progress now and then: a get from
// a unit on another node may need that unit to enter MPI (MPICH over UCX
// emulates it), and the holder releases only after its gets.
TEST(DartLock, PollingTryAcquireLetsTheHolderReadThePollers) {
  dart_lock_t lock;
  ASSERT_EQ(DART_OK, dart_team_lock_init(DART_TEAM_ALL, &lock));
  const dart_gptr_t words = ZeroedCounters(DART_TEAM_ALL, 1);
  int64_t* mine = nullptr;
  dart_gptr_getaddr(At(words, MyId()), reinterpret_cast<void**>(&mine));
  *mine = 100 + MyId();
  for (int holder = 0; holder < Size(); ++holder) {
    if (MyId() == holder) {
      ASSERT_EQ(DART_OK, dart_lock_acquire(lock));
    }
    dart_barrier(DART_TEAM_ALL);
    if (MyId() == holder) {
      for (int u = 0; u < Size(); ++u) EXPECT_EQ(100 + u, Read(At(words, u)));
      ASSERT_EQ(DART_OK, dart_lock_release(lock));
    } else {
      int32_t got = 0;
      while (!got) ASSERT_EQ(DART_OK, dart_lock_try_acquire(lock, &got));
      ASSERT_EQ(DART_OK, dart_lock_release(lock));
    }
    dart_barrier(DART_TEAM_ALL);
  }
  ASSERT_EQ(DART_OK, dart_team_memfree(words));
  ASSERT_EQ(DART_OK, dart_team_lock_destroy(&lock));
}

// Several locks of one team, each guarding its own counter, used
// interleaved; their queue tails sit on different units.
TEST(DartLock, SeveralLocksPerTeam) {
  const int nlocks = 3;
  std::vector<dart_lock_t> locks(nlocks);
  for (auto& l : locks)
    ASSERT_EQ(DART_OK, dart_team_lock_init(DART_TEAM_ALL, &l));
  const dart_gptr_t counters = ZeroedCounters(DART_TEAM_ALL, nlocks);
  const int rounds = Rounds(15, 5);
  for (int round = 0; round < rounds; ++round) {
    for (int k = 0; k < nlocks; ++k) {
      IncrementUnderLock(locks[(k + MyId()) % nlocks],
                         At(counters, 0, 8 * ((k + MyId()) % nlocks)), 1);
    }
  }
  dart_barrier(DART_TEAM_ALL);
  for (int k = 0; k < nlocks; ++k) {
    EXPECT_EQ(rounds * Size(), Read(At(counters, 0, 8 * k)));
  }
  dart_barrier(DART_TEAM_ALL);
  ASSERT_EQ(DART_OK, dart_team_memfree(counters));
  for (auto& l : locks) ASSERT_EQ(DART_OK, dart_team_lock_destroy(&l));
}

// A lock on the team of all units but unit 0 (a sub-team spanning the
// simulated nodes in the split layouts); it is freed with the team.
TEST(DartLock, SubTeamLock) {
  if (Size() < 3) GTEST_SKIP() << "needs 3 units";
  dart_group_t g;
  ASSERT_EQ(DART_OK, dart_group_create(&g));
  for (int u = 1; u < Size(); ++u) {
    ASSERT_EQ(DART_OK, dart_group_addmember(g, DART_GLOBAL_UNIT_ID(u)));
  }
  const int rounds = Rounds(60, 20);  // collective: before the branch
  dart_team_t team = DART_TEAM_NULL;
  ASSERT_EQ(DART_OK,
            dart_team_create(DART_TEAM_ALL, MyId() ? g : nullptr, &team));
  if (team != DART_TEAM_NULL) {
    dart_lock_t lock;
    ASSERT_EQ(DART_OK, dart_team_lock_init(team, &lock));
    const dart_gptr_t counter = At(ZeroedCounters(team, 1), TeamSize(team) - 1);
    IncrementUnderLock(lock, counter, rounds);
    dart_barrier(team);
    EXPECT_EQ(rounds * TeamSize(team), Read(counter));
    dart_barrier(team);
    ASSERT_EQ(DART_OK, dart_team_destroy(&team));  // frees lock and counter
  }
  ASSERT_EQ(DART_OK, dart_group_destroy(&g));
}

}  // namespace
