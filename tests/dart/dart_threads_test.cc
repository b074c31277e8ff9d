// DART_THREAD_MULTIPLE (run with DART_TEST_THREAD_MULTIPLE=1, so main()
// starts DART with dart_init_thread): several threads of every unit use
// locks, one-sided operations, allocations and collectives on different
// teams at once, as DASH's threaded tests do.
#include <dart/dart.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tests/dart/dart_test_util.h"

namespace {

using dart_testing::AllGptrs;
using dart_testing::At;
using dart_testing::MyId;
using dart_testing::Rounds;
using dart_testing::Size;

constexpr int kThreads = 3;

template <typename F>
void OnThreads(int n, F f) {
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) threads.emplace_back(f, t);
  for (std::thread& t : threads) t.join();
}

TEST(DartThreads, MpiRunsThreadMultiple) {
  int provided = 0;
  MPI_Query_thread(&provided);
  EXPECT_EQ(MPI_THREAD_MULTIPLE, provided);
}

// Threads of all units increment one counter on unit 0 under one team
// lock: a plain get + put, correct only if the lock excludes every thread
// of every unit.
TEST(DartThreads, OneLockExcludesAllThreadsOfAllUnits) {
  const int rounds = Rounds(20, 4);
  dart_gptr_t g;
  ASSERT_EQ(DART_OK,
            dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_LONG, &g));
  const dart_gptr_t counter = At(g, 0);
  if (MyId() == 0) {
    const long zero = 0;
    dart_put_blocking(counter, &zero, 1, DART_TYPE_LONG, DART_TYPE_LONG);
  }
  dart_lock_t lock;
  ASSERT_EQ(DART_OK, dart_team_lock_init(DART_TEAM_ALL, &lock));
  std::atomic<int> errors{0};
  OnThreads(kThreads, [&](int t) {
    for (int i = 0; i < rounds; ++i) {
      if (t % 2 == 0) {
        if (dart_lock_acquire(lock) != DART_OK) ++errors;
      } else {
        int32_t got = 0;
        do {
          if (dart_lock_try_acquire(lock, &got) != DART_OK) ++errors;
          if (!got) std::this_thread::yield();
        } while (!got);
      }
      long v = 0;
      dart_get_blocking(&v, counter, 1, DART_TYPE_LONG, DART_TYPE_LONG);
      ++v;
      dart_put_blocking(counter, &v, 1, DART_TYPE_LONG, DART_TYPE_LONG);
      if (dart_lock_release(lock) != DART_OK) ++errors;
    }
  });
  EXPECT_EQ(0, errors.load());
  dart_barrier(DART_TEAM_ALL);
  long total = 0;
  dart_get_blocking(&total, counter, 1, DART_TYPE_LONG, DART_TYPE_LONG);
  EXPECT_EQ(static_cast<long>(Size()) * kThreads * rounds, total);
  ASSERT_EQ(DART_OK, dart_team_lock_destroy(&lock));
  ASSERT_EQ(DART_OK, dart_team_memfree(g));
}

// Two threads run collectives at the same time, each on its own team
// (DART allows one thread per team): allocations and frees on
// DART_TEAM_ALL and on a clone must not deadlock each other.
TEST(DartThreads, CollectivesOnTwoTeamsAtOnce) {
  dart_team_t clone;
  ASSERT_EQ(DART_OK, dart_team_clone(DART_TEAM_ALL, &clone));
  const int rounds = Rounds(6, 3);
  std::atomic<int> errors{0};
  OnThreads(2, [&](int t) {
    const dart_team_t team = t == 0 ? DART_TEAM_ALL : clone;
    for (int i = 0; i < rounds; ++i) {
      dart_gptr_t g;
      if (dart_team_memalloc_aligned(team, 8, DART_TYPE_INT, &g) != DART_OK) {
        ++errors;
        continue;
      }
      const int right = (MyId() + 1) % Size();
      const int v = 1000 * t + MyId();
      if (dart_put_blocking(At(g, right, 4 * t), &v, 1, DART_TYPE_INT,
                            DART_TYPE_INT) != DART_OK) {
        ++errors;
      }
      if (dart_barrier(team) != DART_OK) ++errors;
      int* mine = nullptr;
      dart_gptr_setunit(&g, DART_TEAM_UNIT_ID(MyId()));
      dart_gptr_getaddr(g, reinterpret_cast<void**>(&mine));
      const int left = (MyId() + Size() - 1) % Size();
      if (mine == nullptr || mine[t] != 1000 * t + left) ++errors;
      if (dart_barrier(team) != DART_OK) ++errors;
      if (dart_team_memfree(g) != DART_OK) ++errors;
      int sum = 0, one = 1;
      dart_allreduce(&one, &sum, 1, DART_TYPE_INT, DART_OP_SUM, team);
      if (sum != Size()) ++errors;
    }
  });
  EXPECT_EQ(0, errors.load());
  ASSERT_EQ(DART_OK, dart_team_destroy(&clone));
}

// Threads put into disjoint parts of the neighbour's memory and allocate
// and free memory concurrently.
TEST(DartThreads, PutsAndAllocationsFromThreads) {
  constexpr int kPer = 16;
  dart_gptr_t g;
  ASSERT_EQ(DART_OK, dart_team_memalloc_aligned(DART_TEAM_ALL, kThreads * kPer,
                                                DART_TYPE_INT, &g));
  dart_allocator_t alloc;
  ASSERT_EQ(DART_OK, dart_allocator_new(4096, DART_TEAM_ALL, &alloc));
  const int right = (MyId() + 1) % Size();
  std::atomic<int> errors{0};
  OnThreads(kThreads, [&](int t) {
    std::vector<int> data(kPer);
    for (int i = 0; i < kPer; ++i) data[i] = MyId() * 10000 + t * 100 + i;
    dart_handle_t h = DART_HANDLE_NULL;
    if (dart_put_handle(At(g, right, 4 * kPer * t), data.data(), kPer,
                        DART_TYPE_INT, DART_TYPE_INT, &h) != DART_OK ||
        dart_wait(&h) != DART_OK) {
      ++errors;
    }
    for (int i = 0; i < 20; ++i) {
      dart_gptr_t m, a;
      if (dart_memalloc(4, DART_TYPE_INT, &m) != DART_OK) ++errors;
      if (dart_allocator_alloc(2, DART_TYPE_INT, &a, alloc) != DART_OK) {
        ++errors;
      }
      if (dart_memfree(m) != DART_OK) ++errors;
      if (dart_allocator_free(&a, alloc) != DART_OK) ++errors;
    }
  });
  EXPECT_EQ(0, errors.load());
  dart_barrier(DART_TEAM_ALL);
  std::vector<int> got(kThreads * kPer);
  ASSERT_EQ(DART_OK, dart_get_blocking(got.data(), At(g, MyId()), got.size(),
                                       DART_TYPE_INT, DART_TYPE_INT));
  const int left = (MyId() + Size() - 1) % Size();
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPer; ++i) {
      EXPECT_EQ(left * 10000 + t * 100 + i, got[t * kPer + i]);
    }
  }
  dart_barrier(DART_TEAM_ALL);
  ASSERT_EQ(DART_OK, dart_allocator_destroy(&alloc));
  ASSERT_EQ(DART_OK, dart_team_memfree(g));
}

}  // namespace
