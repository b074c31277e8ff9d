// MPI_Accumulate's word lane (shim/move/word_lane.h: TryWordAccumulate): one
// 8-byte integer with MPI_SUM, MPI_BXOR, MPI_BOR or MPI_BAND, or one double
// with MPI_SUM, applied at once with a CPU atomic while the target's mode
// word allows, declined to the full path when it asks for stripes (right
// after a bulk accumulate). Every update must survive against bulk
// accumulates of other ranks, every value must be the op's, in both modes,
// and the accumulates after the first of an epoch stay queued
// (shim/windows/deferred_atomics.h) until a synchronization.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::IsManaged;
using rmashim_test::Rank;
using rmashim_test::Size;

constexpr int kCounters = 2048;  // one 16 KiB accumulate stripe of words

int SingleOps() {
  return rmashim_test::AllOnOneNode(MPI_COMM_WORLD) ? 20000 : 200;
}
int BulkOps() { return rmashim_test::AllOnOneNode(MPI_COMM_WORLD) ? 200 : 8; }

// A managed window of kCounters zeroed words per rank, every rank past its
// zeroing.
template <typename T>
void AllocateZeroed(T** base, MPI_Win* win) {
  static_assert(sizeof(T) == 8);
  ASSERT_EQ(MPI_Win_allocate(kCounters * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD,
                             base, win),
            MPI_SUCCESS);
  ASSERT_TRUE(IsManaged(*win));
  for (int i = 0; i < kCounters; ++i) (*base)[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
}

// Even ranks add 1.0 to rank 0's counters one flushed accumulate at a time,
// odd ranks add 1.0 to all of them with one MPI_Accumulate: no update may
// be lost (the sums are small integers, exact in a double).
TEST(AccumulateLane, DoubleSumsAgainstBulkAccumulates) {
  const int rank = Rank(), size = Size();
  const int single_ops = SingleOps(), bulk_ops = BulkOps();
  double* base = nullptr;
  MPI_Win win;
  ASSERT_NO_FATAL_FAILURE(AllocateZeroed(&base, &win));
  MPI_Win_lock_all(0, win);
  if (rank % 2 == 0) {
    const double one = 1.0;
    for (int op = 0; op < single_ops; ++op) {
      MPI_Accumulate(&one, 1, MPI_DOUBLE, 0, op % kCounters, 1, MPI_DOUBLE,
                     MPI_SUM, win);
      MPI_Win_flush(0, win);
    }
  } else {
    const std::vector<double> ones(kCounters, 1.0);
    for (int op = 0; op < bulk_ops; ++op) {
      MPI_Accumulate(ones.data(), kCounters, MPI_DOUBLE, 0, 0, kCounters,
                     MPI_DOUBLE, MPI_SUM, win);
      MPI_Win_flush(0, win);
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    const int single_ranks = (size + 1) / 2, bulk_ranks = size / 2;
    for (int i = 0; i < kCounters; ++i) {
      const double expected = single_ranks * (single_ops / kCounters +
                                              (i < single_ops % kCounters)) +
                              bulk_ranks * bulk_ops;
      ASSERT_EQ(base[i], expected) << "counter " << i;
    }
  }
  MPI_Win_free(&win);
}

// The same race with MPI_BXOR on MPI_UINT64_T: even ranks flip one bit per
// flushed accumulate, odd ranks flip bit 63 of every counter per bulk
// accumulate. XOR commutes, so the result is known whatever the order.
TEST(AccumulateLane, XorAgainstBulkXors) {
  const int rank = Rank(), size = Size();
  const int single_ops = SingleOps(), bulk_ops = BulkOps();
  uint64_t* base = nullptr;
  MPI_Win win;
  ASSERT_NO_FATAL_FAILURE(AllocateZeroed(&base, &win));
  auto bit_of = [](int r, int op) {
    return uint64_t{1} << ((r + op / kCounters) % 63);
  };
  MPI_Win_lock_all(0, win);
  if (rank % 2 == 0) {
    for (int op = 0; op < single_ops; ++op) {
      const uint64_t bit = bit_of(rank, op);
      MPI_Accumulate(&bit, 1, MPI_UINT64_T, 0, op % kCounters, 1, MPI_UINT64_T,
                     MPI_BXOR, win);
      MPI_Win_flush(0, win);
    }
  } else {
    const std::vector<uint64_t> top(kCounters, uint64_t{1} << 63);
    for (int op = 0; op < bulk_ops; ++op) {
      MPI_Accumulate(top.data(), kCounters, MPI_UINT64_T, 0, 0, kCounters,
                     MPI_UINT64_T, MPI_BXOR, win);
      MPI_Win_flush(0, win);
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    std::vector<uint64_t> expected(kCounters, 0);
    for (int r = 0; r < size; r += 2) {
      for (int op = 0; op < single_ops; ++op)
        expected[op % kCounters] ^= bit_of(r, op);
    }
    if ((size / 2) * bulk_ops % 2 == 1) {
      for (uint64_t& e : expected) e ^= uint64_t{1} << 63;
    }
    for (int i = 0; i < kCounters; ++i) ASSERT_EQ(base[i], expected[i]) << i;
  }
  MPI_Win_free(&win);
}

// Reads rank `target`'s word `disp` (flushed NO_OP fetch).
uint64_t Read(MPI_Win win, int target, MPI_Aint disp) {
  uint64_t v = 0;
  MPI_Fetch_and_op(nullptr, &v, MPI_UINT64_T, target, disp, MPI_NO_OP, win);
  MPI_Win_flush(target, win);
  return v;
}

// Every lane shape, each checked through a read: right after a bulk
// accumulate (the mode word asks for stripes, the lane declines) and after
// 300 flushed single updates (enough to turn the word unstriped again, the
// lane serves), in a lock_all epoch and under a shared lock. Each rank
// works on its own words of the next rank's window.
TEST(AccumulateLane, EveryShapeInBothModes) {
  const int rank = Rank(), size = Size();
  const int target = (rank + 1) % size;
  uint64_t* base = nullptr;
  MPI_Win win;
  ASSERT_NO_FATAL_FAILURE(AllocateZeroed(&base, &win));
  constexpr int kHalf = kCounters / 2;
  const std::vector<uint64_t> ones(kHalf, 1);
  const MPI_Datatype types[] = {MPI_LONG, MPI_UINT64_T, MPI_INT64_T,
                                MPI_UNSIGNED_LONG_LONG};
  const MPI_Aint word = 8 * rank, real = 8 * rank + 1;
  for (int epoch = 0; epoch < 2; ++epoch) {
    if (epoch == 0) {
      MPI_Win_lock_all(0, win);
    } else {
      MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
    }
    for (int mode = 0; mode < 2; ++mode) {
      const int round = 2 * epoch + mode;
      MPI_Accumulate(ones.data(), kHalf, MPI_UINT64_T, target, kHalf, kHalf,
                     MPI_UINT64_T, MPI_SUM, win);
      MPI_Win_flush(target, win);
      if (mode == 1) {
        for (int i = 0; i < 300; ++i) Read(win, target, word);
      }
      const MPI_Datatype type = types[round];
      const uint64_t start = Read(win, target, word);
      const uint64_t add = 5 + round, flip = 0xf0f0, set = uint64_t{1} << 40,
                     keep = ~uint64_t{0x3};
      MPI_Accumulate(&add, 1, type, target, word, 1, type, MPI_SUM, win);
      MPI_Win_flush(target, win);
      ASSERT_EQ(Read(win, target, word), start + add) << "SUM " << round;
      MPI_Accumulate(&flip, 1, type, target, word, 1, type, MPI_BXOR, win);
      MPI_Win_flush(target, win);
      ASSERT_EQ(Read(win, target, word), (start + add) ^ flip) << round;
      MPI_Accumulate(&set, 1, type, target, word, 1, type, MPI_BOR, win);
      MPI_Win_flush(target, win);
      ASSERT_EQ(Read(win, target, word), ((start + add) ^ flip) | set) << round;
      MPI_Accumulate(&keep, 1, type, target, word, 1, type, MPI_BAND, win);
      MPI_Win_flush(target, win);
      ASSERT_EQ(Read(win, target, word), (((start + add) ^ flip) | set) & keep)
          << "BAND " << round;
      const double half = 0.5;
      double before = 0, after = 0;
      MPI_Fetch_and_op(nullptr, &before, MPI_DOUBLE, target, real, MPI_NO_OP,
                       win);
      MPI_Win_flush(target, win);
      MPI_Accumulate(&half, 1, MPI_DOUBLE, target, real, 1, MPI_DOUBLE, MPI_SUM,
                     win);
      MPI_Win_flush(target, win);
      MPI_Fetch_and_op(nullptr, &after, MPI_DOUBLE, target, real, MPI_NO_OP,
                       win);
      MPI_Win_flush(target, win);
      ASSERT_EQ(after, before + 0.5) << "double SUM " << round;
    }
    if (epoch == 0) {
      MPI_Win_unlock_all(win);
    } else {
      MPI_Win_unlock(target, win);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const int from = (rank + size - 1) % size;  // whose words lie here
  EXPECT_EQ(reinterpret_cast<double*>(base)[8 * from + 1], 2.0);
  for (int i = kHalf; i < kCounters; ++i) ASSERT_EQ(base[i], 4u) << i;
  MPI_Win_free(&win);
}

// The first accumulate of an epoch goes through the lane and arms the
// queue, the nine after it are queued: the flush applies them all, and
// none is applied twice or lost.
TEST(AccumulateLane, FirstAtOnceTheBurstAtTheFlush) {
  const int rank = Rank(), size = Size();
  uint64_t* base = nullptr;
  MPI_Win win;
  ASSERT_NO_FATAL_FAILURE(AllocateZeroed(&base, &win));
  const int target = (rank + 1) % size;
  const uint64_t one = 1;
  MPI_Win_lock_all(0, win);
  for (int i = 0; i < 10; ++i) {
    MPI_Accumulate(&one, 1, MPI_UINT64_T, target, rank, 1, MPI_UINT64_T,
                   MPI_SUM, win);
  }
  MPI_Win_flush(target, win);
  EXPECT_EQ(Read(win, target, rank), 10u);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(base[(rank + size - 1) % size], 10u);
  MPI_Win_free(&win);
}

// Fence epochs never queue: every one-word accumulate there goes through
// the lane at once (also after the first has armed the queue), and the
// closing fence shows all of them to the target.
TEST(AccumulateLane, EveryAccumulateOfAFenceEpoch) {
  const int rank = Rank(), size = Size();
  const int target = (rank + 1) % size;
  uint64_t* base = nullptr;
  MPI_Win win;
  ASSERT_NO_FATAL_FAILURE(AllocateZeroed(&base, &win));
  constexpr int kRounds = 100;
  const uint64_t one = 1, bit = uint64_t{1} << (rank % 64);
  const double quarter = 0.25;
  const MPI_Aint sum = 4 * rank, bits = 4 * rank + 1, real = 4 * rank + 2;
  MPI_Win_fence(0, win);
  for (int i = 0; i < kRounds; ++i) {
    MPI_Accumulate(&one, 1, MPI_INT64_T, target, sum, 1, MPI_INT64_T, MPI_SUM,
                   win);
    MPI_Accumulate(&bit, 1, MPI_UINT64_T, target, bits, 1, MPI_UINT64_T,
                   MPI_BXOR, win);
    MPI_Accumulate(&quarter, 1, MPI_DOUBLE, target, real, 1, MPI_DOUBLE,
                   MPI_SUM, win);
  }
  MPI_Win_fence(0, win);
  const int from = (rank + size - 1) % size;  // whose words lie here
  EXPECT_EQ(base[4 * from], uint64_t{kRounds});
  EXPECT_EQ(base[4 * from + 1], 0u) << "an even number of flips";
  EXPECT_EQ(reinterpret_cast<double*>(base)[4 * from + 2], 0.25 * kRounds);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  MPI_Win_free(&win);
}

}  // namespace
