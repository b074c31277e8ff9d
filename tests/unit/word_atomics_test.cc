// Word atomics without stripes (shim/sync/word_atomics.h) inside one process:
// threads stand in for the node's ranks, each with its own slot, on a
// segment header in ordinary memory. Atomic updaters and bulk (plain-loop)
// updaters hit the same counters at once through ApplyRun; every update
// must survive, and the mode word must go striped on a bulk update and back
// to unstriped after kRevertAfter atomic updates without one.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "shim/move/accumulate.h"
#include "shim/sync/word_atomics.h"
#include "shim/types/element_ops.h"
#include "shim/windows/window.h"

namespace rmashim {
namespace {

constexpr int kSlots = 2;
constexpr size_t kCounters = 2048;  // a bulk update covers all of them:
                                    // one 16 KiB stripe

// A header with `kSlots` slots after it, and window memory of kCounters
// int64s: what MapTargets lays out in a node-shared segment.
class FakeTarget {
 public:
  FakeTarget() {
    storage_ = static_cast<std::byte*>(
        ::operator new (HeaderBytes(kSlots, 0), std::align_val_t{4096}));
    auto* header = new (storage_) SegmentHeader;
    header->unstriped_slot_count = kSlots;
    for (int s = 0; s < kSlots; ++s)
      new (header->unstriped_slots() + s) UnstripedSlot;
    counters_.assign(kCounters, 0);
    target_.header = header;
    target_.base = reinterpret_cast<std::byte*>(counters_.data());
    target_.size = static_cast<MPI_Aint>(kCounters * sizeof(int64_t));
  }
  ~FakeTarget() { ::operator delete (storage_, std::align_val_t{4096}); }

  const Target& target() const { return target_; }
  SegmentHeader& header() { return *target_.header; }
  int64_t counter(size_t i) const {
    return std::atomic_ref<const int64_t>(counters_[i]).load();
  }

 private:
  std::byte* storage_;
  std::vector<int64_t> counters_;
  Target target_;
};

const ElementOp& SumInt64() {
  const ElementOp* e = BuiltinElementOp(MPI_INT64_T, MPI_SUM);
  EXPECT_NE(e, nullptr);
  return *e;
}

TEST(WordAtomics, ProcessRegistersForTheAsymmetricFence) {
  // Linux >= 4.16 has MEMBARRIER_CMD_GLOBAL_EXPEDITED; every machine this
  // project runs on does. Without it the shim keeps the stripes (tested by
  // the same cases below, which then pass through BulkEntry's fallback).
  EXPECT_TRUE(UnstripedAtomicsRegistered());
}

TEST(WordAtomics, ModeGoesStripedOnBulkAndBackAfterIdleAtomics) {
  if (!UnstripedAtomicsRegistered()) GTEST_SKIP() << "no membarrier here";
  FakeTarget t;
  const ElementOp& sum = SumInt64();
  const int64_t one = 1;
  ApplyRun(sum, false, t.target(), 0, reinterpret_cast<const std::byte*>(&one),
           nullptr, 1, /*slot=*/0);
  EXPECT_EQ(t.header().word_mode.load(), kWordModeUnstriped);
  std::vector<int64_t> ones(kCounters, 1);
  ApplyRun(sum, false, t.target(), 0,
           reinterpret_cast<const std::byte*>(ones.data()), nullptr, kCounters,
           /*slot=*/1);
  EXPECT_EQ(t.header().word_mode.load(), kWordModeStriped);
  for (uint32_t i = 0; i + 1 < kRevertAfter; ++i) {
    ApplyRun(sum, false, t.target(), 8,
             reinterpret_cast<const std::byte*>(&one), nullptr, 1, /*slot=*/0);
  }
  EXPECT_EQ(t.header().word_mode.load(), kWordModeStriped);
  ApplyRun(sum, false, t.target(), 8, reinterpret_cast<const std::byte*>(&one),
           nullptr, 1, /*slot=*/0);
  EXPECT_EQ(t.header().word_mode.load(), kWordModeUnstriped);
  EXPECT_EQ(t.counter(0), 2);
  EXPECT_EQ(t.counter(1), 1 + kRevertAfter);
  EXPECT_EQ(t.counter(2), 1);
  EXPECT_EQ(t.counter(kCounters - 1), 1);
}

// An atomic updater and a bulk updater on the same counters, one thread
// each (the machine may have two cores): a bulk loop that overlapped an
// unstriped atomic update would lose it, and does within a few rounds when
// BulkEntry is a no-op.
TEST(WordAtomics, NoUpdateIsLostBetweenAtomicAndBulkUpdaters) {
  FakeTarget t;
  const ElementOp& sum = SumInt64();
  constexpr int kAtomicRounds = 1 << 21;
  std::atomic<bool> go{false}, atomics_done{false};
  std::thread atomic_updater([&] {
    while (!go.load()) {
    }
    const int64_t one = 1;
    for (int r = 0; r < kAtomicRounds; ++r) {
      const MPI_Aint offset = static_cast<MPI_Aint>((r % kCounters) * 8);
      ApplyRun(sum, false, t.target(), offset,
               reinterpret_cast<const std::byte*>(&one), nullptr, 1,
               /*slot=*/0);
    }
    atomics_done.store(true);
  });
  std::vector<int64_t> ones(kCounters, 1);
  int64_t bulk_rounds = 0;
  std::thread bulk_updater([&] {
    while (!go.load()) {
    }
    while (!atomics_done.load()) {
      ApplyRun(sum, false, t.target(), 0,
               reinterpret_cast<const std::byte*>(ones.data()), nullptr,
               kCounters, /*slot=*/1);
      ++bulk_rounds;
      // Let the atomic updater revert the mode now and then, so bulk
      // updates keep meeting unstriped ones.
      for (int spin = 0; spin < 5000; ++spin) CpuRelax();
    }
  });
  go.store(true);
  atomic_updater.join();
  bulk_updater.join();
  EXPECT_GT(bulk_rounds, 0);
  int64_t lost = 0;
  for (size_t i = 0; i < kCounters; ++i) {
    const int64_t expected = kAtomicRounds / kCounters + bulk_rounds;
    lost += expected - t.counter(i);
  }
  EXPECT_EQ(lost, 0) << "of " << bulk_rounds << " bulk rounds";
}

// Without slots (DART's heap, MPI_Win_create windows) the protocol is off:
// bulk updates leave the mode word alone.
TEST(WordAtomics, TargetsWithoutSlotsKeepTheStripes) {
  FakeTarget t;
  t.header().unstriped_slot_count = 0;
  std::vector<int64_t> ones(kCounters, 1);
  ApplyRun(SumInt64(), false, t.target(), 0,
           reinterpret_cast<const std::byte*>(ones.data()), nullptr, kCounters);
  EXPECT_EQ(t.header().word_mode.load(), kWordModeUnstriped);
  EXPECT_EQ(t.counter(5), 1);
}

}  // namespace
}  // namespace rmashim
