// Word atomics and bulk accumulates on the same counters from different
// ranks at once (shim/word_atomics.h): fetch_and_op and compare_and_swap
// updates skip the stripes while no bulk update is in progress, so a bulk
// MPI_Accumulate must wait for them, and they for it. Every update must
// survive, on one node and across the simulated node splits (where windows
// spanning nodes keep accumulates in MPI).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::IsManaged;
using rmashim_test::Rank;
using rmashim_test::Size;

constexpr int kCounters = 2048;  // one 16 KiB accumulate stripe of int64
constexpr int kAtomicOps = 100000;
constexpr int kBulkOps = 400;

// Even ranks update counters one at a time (fetch_and_op, or
// compare_and_swap loops that add one), odd ranks add one to all of them
// with one MPI_Accumulate; all on rank 0's window, in one lock_all epoch.
void RunMixed(bool use_cas) {
  const int rank = Rank(), size = Size();
  int64_t* base = nullptr;
  MPI_Win win;
  ASSERT_EQ(MPI_Win_allocate(kCounters * sizeof(int64_t), sizeof(int64_t),
                             MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
            MPI_SUCCESS);
  ASSERT_TRUE(IsManaged(win));
  for (int i = 0; i < kCounters; ++i) base[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, win);
  if (rank % 2 == 0) {
    const int64_t one = 1;
    for (int op = 0; op < kAtomicOps; ++op) {
      const MPI_Aint disp = op % kCounters;
      if (!use_cas) {
        int64_t old = 0;
        MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, disp, MPI_SUM, win);
        MPI_Win_flush(0, win);
        continue;
      }
      int64_t seen = 0, swapped = -1;
      MPI_Fetch_and_op(nullptr, &seen, MPI_INT64_T, 0, disp, MPI_NO_OP, win);
      MPI_Win_flush(0, win);
      while (true) {
        const int64_t next = seen + 1;
        MPI_Compare_and_swap(&next, &seen, &swapped, MPI_INT64_T, 0, disp, win);
        MPI_Win_flush(0, win);
        if (swapped == seen) break;
        seen = swapped;
      }
    }
  } else {
    const std::vector<int64_t> ones(kCounters, 1);
    for (int op = 0; op < kBulkOps; ++op) {
      MPI_Accumulate(ones.data(), kCounters, MPI_INT64_T, 0, 0, kCounters,
                     MPI_INT64_T, MPI_SUM, win);
      MPI_Win_flush(0, win);
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    const int atomic_ranks = (size + 1) / 2, bulk_ranks = size / 2;
    int64_t lost = 0;
    for (int i = 0; i < kCounters; ++i) {
      const int64_t expected =
          atomic_ranks * (kAtomicOps / kCounters + (i < kAtomicOps % kCounters)) +
          bulk_ranks * kBulkOps;
      lost += expected - base[i];
    }
    EXPECT_EQ(lost, 0) << "updates lost over " << kCounters << " counters";
    EXPECT_EQ(base[kCounters - 1],
              atomic_ranks * (kAtomicOps / kCounters) + bulk_ranks * kBulkOps);
  }
  MPI_Win_free(&win);
}

TEST(WordAtomics, FetchAndOpAgainstBulkAccumulates) { RunMixed(false); }

TEST(WordAtomics, CompareAndSwapAgainstBulkAccumulates) { RunMixed(true); }

}  // namespace
