// Windows over reused node segments (shim/windows/segment_cache.h): a window
// allocated right after another of the same size is laid over the freed
// window's segment, and node peers reuse their mappings of it. Whatever the
// freed window left there (data, lock words taken, accumulate stripes held,
// fence and PSCW counters) must not show: the new window's memory reads
// zero and every kind of synchronization works on it (and word atomics and
// bulk accumulates next to each other), checked on data.
// Also: a reused segment serves one live window at a time, across
// communicators of other membership or order, and for every flavor.
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "shim/windows/window.h"
#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AllocWindow;
using rmashim_test::AllOnOneNode;
using rmashim_test::HangWatchdog;
using rmashim_test::NodeLocalRanks;
using rmashim_test::Rank;
using rmashim_test::ScopedComm;
using rmashim_test::Size;

constexpr MPI_Aint kBytes = 3 * 4096 + 512;  // not a whole number of pages
constexpr int kLongs = kBytes / sizeof(long);

// Node-local ranks of `comm`.
int NodeSize(MPI_Comm comm) {
  int n = 0;
  for (bool local : NodeLocalRanks(comm)) n += local;
  return n;
}

// The shim's sync header in front of this rank's memory of a managed
// MPI_Win_allocate window over `comm` (shim/windows/window.h's layout).
rmashim::SegmentHeader* HeaderOf(void* base, MPI_Comm comm) {
  const rmashim::HeaderArrays arrays =
      rmashim::HeaderArraysFor(AllOnOneNode(comm), false, NodeSize(comm));
  return reinterpret_cast<rmashim::SegmentHeader*>(
      static_cast<std::byte*>(base) -
      rmashim::HeaderBytes(arrays.unstriped_slots, arrays.post_counters));
}

// Leaves every word of this rank's header as if a crowd of lockers,
// accumulators and epochs had left in the middle: held by a writer, with
// tickets drawn that nobody will serve; a bulk accumulate draining the word
// atomics, which every rank announces it is in (shim/sync/word_atomics.h).
void Trample(rmashim::SegmentHeader* h) {
  const uint64_t taken = (uint64_t{7} << 48) | (uint64_t{3} << 32) |
                         (uint64_t{1} << 16) | uint64_t{2};
  h->lock_words.lock.store(taken);
  h->lock_words.all.store(taken);
  for (auto& stripe : h->stripes) stripe.store(taken);
  h->completes.store(12345);
  for (auto& arrivals : h->barrier_arrivals) arrivals.store(99);
  h->word_mode.store(rmashim::kWordModeDraining +
                     3 * rmashim::kWordModeBulkUnit);
  for (uint32_t r = 0; r < h->unstriped_slot_count; ++r) {
    h->unstriped_slots()[r].seq.store(1);
  }
  for (uint32_t r = 0; r < h->unstriped_slot_count; ++r) {
    h->post_counters()[r].store(77);  // as many as slots: one per node rank
  }
}

// Every synchronization the shim serves, with puts, accumulates and
// atomics from every rank to every rank of `win` (kLongs longs each, zero
// at the start), checked on data. Fails instead of hanging.
void ExpectEverySyncWorks(MPI_Win win, long* mine, MPI_Comm comm) {
  HangWatchdog watchdog(60, "synchronization on a reused segment");
  const int rank = Rank(comm), size = Size(comm);
  const long one = 1;
  // Exclusive locks: a put into this rank's slot, an accumulate on word 0.
  for (int t = 0; t < size; ++t) {
    const long value = 1000 + rank;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
    MPI_Put(&value, 1, MPI_LONG, t, 8 + rank, 1, MPI_LONG, win);
    MPI_Accumulate(&one, 1, MPI_LONG, t, 0, 1, MPI_LONG, MPI_SUM, win);
    MPI_Win_unlock(t, win);
  }
  // Shared locks: accumulates on word 1 (stripes held shared).
  for (int t = 0; t < size; ++t) {
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
    MPI_Accumulate(&one, 1, MPI_LONG, t, 1, 1, MPI_LONG, MPI_SUM, win);
    MPI_Win_unlock(t, win);
  }
  // lock_all: fetch_and_op on word 2 of every target.
  // The results stay in scope until unlock_all completes the operations
  // (MPI writes them then on targets it serves).
  std::vector<long> old(size, 0);
  MPI_Win_lock_all(0, win);
  for (int t = 0; t < size; ++t) {
    MPI_Fetch_and_op(&one, &old[t], MPI_LONG, t, 2, MPI_SUM, win);
  }
  MPI_Win_unlock_all(win);
  // A large accumulate (plain loop under exclusive stripes) on the tail.
  std::vector<long> ones(kLongs / 2, 1);
  const int tail = kLongs - kLongs / 2;
  MPI_Win_lock_all(0, win);
  for (int t = 0; t < size; ++t) {
    MPI_Accumulate(ones.data(), kLongs / 2, MPI_LONG, t, tail, kLongs / 2,
                   MPI_LONG, MPI_SUM, win);
  }
  MPI_Win_unlock_all(win);
  // Fence: a put into word 3 of the right neighbour.
  const long fenced = 500 + rank;
  MPI_Win_fence(0, win);
  MPI_Put(&fenced, 1, MPI_LONG, (rank + 1) % size, 3, 1, MPI_LONG, win);
  MPI_Win_fence(0, win);
  // PSCW: everyone posts to everyone, accumulates on word 4.
  MPI_Group group;
  MPI_Win_get_group(win, &group);
  MPI_Win_post(group, 0, win);
  MPI_Win_start(group, 0, win);
  for (int t = 0; t < size; ++t) {
    MPI_Accumulate(&one, 1, MPI_LONG, t, 4, 1, MPI_LONG, MPI_SUM, win);
  }
  MPI_Win_complete(win);
  MPI_Win_wait(win);
  MPI_Group_free(&group);
  MPI_Barrier(comm);

  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  EXPECT_EQ(mine[0], size);
  EXPECT_EQ(mine[1], size);
  EXPECT_EQ(mine[2], size);
  EXPECT_EQ(mine[3], 500 + (rank + size - 1) % size);
  EXPECT_EQ(mine[4], size);
  for (int r = 0; r < size; ++r) EXPECT_EQ(mine[8 + r], 1000 + r) << r;
  for (int i = 8 + size; i < tail; ++i) ASSERT_EQ(mine[i], 0) << i;
  for (int i = tail; i < kLongs; ++i) ASSERT_EQ(mine[i], size) << i;
  MPI_Win_unlock(rank, win);
}

// Every byte of this rank's and its node peers' window memory is zero.
// Collective: no rank writes to the window before every rank has looked.
void ExpectAllZero(MPI_Win win, MPI_Comm comm) {
  const std::vector<bool> local = NodeLocalRanks(comm);
  MPI_Win_lock_all(0, win);
  for (int r = 0; r < Size(comm); ++r) {
    if (!local[r]) continue;
    MPI_Aint size = 0;
    int unit = 0;
    unsigned char* base = nullptr;
    MPI_Win_shared_query(win, r, &size, &unit, &base);
    ASSERT_EQ(size, kBytes) << "rank " << r;
    MPI_Aint nonzero = 0;
    while (nonzero < size && base[nonzero] == 0) ++nonzero;
    EXPECT_EQ(nonzero, size) << "rank " << r << ": first non-zero byte";
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(comm);
}

TEST(SegmentCacheTest, FreedSegmentComesBackZeroed) {
  void* first = nullptr;
  {
    AllocWindow w(kBytes, sizeof(long));
    ASSERT_MANAGED(w.win());
    first = w.base();
    std::memset(w.base(), 0xa5, kBytes);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  AllocWindow w(kBytes, sizeof(long));
  ASSERT_MANAGED(w.win());
  EXPECT_EQ(w.base(), first) << "the freed window's segment was not reused";
  ExpectAllZero(w.win(), MPI_COMM_WORLD);
}

TEST(SegmentCacheTest, StaleLockWordsStripesAndCountersAreReset) {
  void* first = nullptr;
  {
    AllocWindow w(kBytes, sizeof(long));
    ASSERT_MANAGED(w.win());
    first = w.base();
    MPI_Barrier(MPI_COMM_WORLD);
    Trample(HeaderOf(w.base(), MPI_COMM_WORLD));
    MPI_Barrier(MPI_COMM_WORLD);
  }
  AllocWindow w(kBytes, sizeof(long));
  ASSERT_MANAGED(w.win());
  ASSERT_EQ(w.base(), first) << "the freed window's segment was not reused";
  ExpectEverySyncWorks(w.win(), w.base<long>(), MPI_COMM_WORLD);
}

// Windows on communicators of other order and membership take the freed
// segments: peers map them again (or reuse their mappings) correctly.
TEST(SegmentCacheTest, ReusedAcrossCommunicators) {
  const int rank = Rank(), size = Size();
  MPI_Comm reversed, halves;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &halves);
  ScopedComm reversed_owner(reversed), halves_owner(halves);
  for (MPI_Comm comm :
       {MPI_COMM_WORLD, reversed, halves, MPI_COMM_WORLD, halves, reversed}) {
    AllocWindow w(kBytes, sizeof(long), MPI_INFO_NULL, comm);
    ASSERT_MANAGED(w.win());
    ExpectAllZero(w.win(), comm);
    ExpectEverySyncWorks(w.win(), w.base<long>(), comm);
  }
}

// A reused segment serves one live window only: windows alive together
// never share memory, whatever was freed before them.
TEST(SegmentCacheTest, LiveWindowsNeverShareASegment) {
  const int rank = Rank(), size = Size();
  { AllocWindow a(kBytes, sizeof(long)), b(kBytes, sizeof(long)); }
  AllocWindow a(kBytes, sizeof(long));
  AllocWindow b(kBytes, sizeof(long));
  AllocWindow c(kBytes, sizeof(long));
  ASSERT_MANAGED(a.win());
  ASSERT_MANAGED(b.win());
  ASSERT_MANAGED(c.win());
  EXPECT_NE(a.base(), b.base());
  EXPECT_NE(a.base(), c.base());
  EXPECT_NE(b.base(), c.base());
  const AllocWindow* ws[] = {&a, &b, &c};
  for (int i = 0; i < 3; ++i) {
    const long value = 100 * (i + 1) + rank;
    MPI_Win_lock_all(0, ws[i]->win());
    for (int t = 0; t < size; ++t) {
      MPI_Put(&value, 1, MPI_LONG, t, rank, 1, MPI_LONG, ws[i]->win());
    }
    MPI_Win_unlock_all(ws[i]->win());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < 3; ++i) {
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, ws[i]->win());
    for (int r = 0; r < size; ++r) {
      EXPECT_EQ(ws[i]->base<long>()[r], 100 * (i + 1) + r) << i << " " << r;
    }
    MPI_Win_unlock(rank, ws[i]->win());
  }
}

// MPI_Win_create and MPI_Win_allocate_shared windows get header-only
// segments, reused window after window: each starts from clean counters
// and locks (PSCW and fence counters of the last one would let epochs end
// early, and data arrive late).
TEST(SegmentCacheTest, OtherFlavorsReuseCleanHeaders) {
  for (int round = 0; round < 6; ++round) {
    const bool shared = round % 2 == 1;
    MPI_Comm comm = MPI_COMM_WORLD;
    ScopedComm node(shared ? rmashim_test::SplitNodeComm() : MPI_COMM_NULL);
    if (shared) comm = node.get();
    std::vector<long> own(kLongs, 0);
    long* mine = own.data();
    MPI_Win win;
    if (shared) {
      MPI_Win_allocate_shared(kBytes, sizeof(long), MPI_INFO_NULL, comm, &mine,
                              &win);
      std::memset(mine, 0, kBytes);
    } else {
      MPI_Win_create(mine, kBytes, sizeof(long), MPI_INFO_NULL, comm, &win);
    }
    ASSERT_MANAGED(win);
    MPI_Barrier(comm);
    ExpectEverySyncWorks(win, mine, comm);
    MPI_Win_free(&win);
  }
}

}  // namespace
