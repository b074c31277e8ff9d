// Remote puts and gets as one-sided RMA of the agents' transport
// (shim/agent/agent_rma.cc), with no RMASHIM_* setting: on windows spanning
// nodes (MPI_Win_allocate and MPI_Win_create memory from malloc), in
// passive epochs, every rank puts a pattern of 8 B, 64 KiB and 1 MiB into
// every remote rank's memory and gets back what the remote rank's other
// origin put, completed by flush, by unlock of an exclusive lock and by
// MPI_Rget's request. Each dense remote put and get is counted as RMA
// (rmashim_agent_rma_ops) exactly once; a strided one (a vector type) is
// not, and is moved all the same; every byte is checked at the target and
// at the origin.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::AgentRmaOps;
using rmashim_test::AgentRunning;
using rmashim_test::AllocWindow;
using rmashim_test::NodeLocalRanks;
using rmashim_test::PatternByte;
using rmashim_test::Rank;
using rmashim_test::Size;

constexpr size_t kSizes[] = {8, 64 * 1024, 1024 * 1024};
constexpr size_t kSlot = 1024 * 1024;  // bytes per origin in each window

enum class Memory { kAllocate, kCreate };

class Window {
 public:
  explicit Window(Memory memory) {
    const MPI_Aint bytes = static_cast<MPI_Aint>(kSlot) * Size();
    if (memory == Memory::kAllocate) {
      EXPECT_EQ(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                                 &base_, &win_),
                MPI_SUCCESS);
    } else {
      owned_ = std::malloc(static_cast<size_t>(bytes));
      base_ = owned_;
      EXPECT_EQ(
          MPI_Win_create(base_, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_),
          MPI_SUCCESS);
    }
    std::memset(base_, 0, static_cast<size_t>(bytes));
    MPI_Barrier(MPI_COMM_WORLD);
  }
  ~Window() {
    MPI_Win_free(&win_);
    std::free(owned_);
  }
  MPI_Win win() const { return win_; }
  std::byte* slot(int origin) const {
    return static_cast<std::byte*>(base_) + kSlot * origin;
  }

 private:
  void* base_ = nullptr;
  void* owned_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
};

std::vector<std::byte> Pattern(int writer, size_t bytes, int salt) {
  std::vector<std::byte> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = PatternByte(writer, i, salt);
  return v;
}

// Every byte of origin `o`'s slot at this rank: its pattern where it is
// remote and wrote `bytes`, zero beyond.
void ExpectSlots(const Window& w, size_t bytes, int salt) {
  const std::vector<bool> local = NodeLocalRanks();
  for (int o = 0; o < Size(); ++o) {
    if (local[o]) continue;
    const std::vector<std::byte> want = Pattern(o, bytes, salt);
    ASSERT_EQ(std::memcmp(w.slot(o), want.data(), bytes), 0)
        << "origin " << o << ", " << bytes << " bytes";
  }
}

class AgentRma : public ::testing::TestWithParam<Memory> {};

TEST_P(AgentRma, PutsAndGetsAreRmaAndExact) {
  ASSERT_TRUE(AgentRunning()) << "on by default on a job spanning nodes";
  const int rank = Rank(), size = Size();
  const std::vector<bool> local = NodeLocalRanks();
  int remotes = 0;
  for (int t = 0; t < size; ++t) remotes += local[t] ? 0 : 1;
  Window w(GetParam());
  int salt = 0;
  for (const size_t bytes : kSizes) {
    ++salt;
    const std::vector<std::byte> mine = Pattern(rank, bytes, salt);
    const long long before = AgentRmaOps();
    // Puts, completed by flush_all in lock_all.
    MPI_Win_lock_all(0, w.win());
    for (int t = 0; t < size; ++t) {
      if (local[t]) continue;
      MPI_Put(mine.data(), static_cast<int>(bytes), MPI_BYTE, t,
              static_cast<MPI_Aint>(kSlot) * rank, static_cast<int>(bytes),
              MPI_BYTE, w.win());
    }
    MPI_Win_flush_all(w.win());
    MPI_Win_unlock_all(w.win());
    EXPECT_EQ(AgentRmaOps() - before, remotes) << bytes << " bytes";
    MPI_Barrier(MPI_COMM_WORLD);
    ExpectSlots(w, bytes, salt);
    MPI_Barrier(MPI_COMM_WORLD);
    // Gets of what this rank put, through MPI_Rget's request.
    MPI_Win_lock_all(0, w.win());
    for (int t = 0; t < size; ++t) {
      if (local[t]) continue;
      std::vector<std::byte> back(bytes);
      MPI_Request r;
      MPI_Rget(back.data(), static_cast<int>(bytes), MPI_BYTE, t,
               static_cast<MPI_Aint>(kSlot) * rank, static_cast<int>(bytes),
               MPI_BYTE, w.win(), &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      EXPECT_EQ(back, mine) << "from " << t << ", " << bytes << " bytes";
    }
    MPI_Win_unlock_all(w.win());
    EXPECT_EQ(AgentRmaOps() - before, 2 * remotes) << bytes << " bytes";
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

// Completed by the unlock of an exclusive lock: the target sees it once
// every origin's unlock returned.
TEST_P(AgentRma, ExclusiveUnlockCompletesPut) {
  const int rank = Rank(), size = Size();
  const std::vector<bool> local = NodeLocalRanks();
  Window w(GetParam());
  const std::vector<std::byte> mine = Pattern(rank, 4096, 9);
  for (int t = 0; t < size; ++t) {
    if (local[t]) continue;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w.win());
    MPI_Put(mine.data(), 4096, MPI_BYTE, t, static_cast<MPI_Aint>(kSlot) * rank,
            4096, MPI_BYTE, w.win());
    MPI_Win_unlock(t, w.win());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  ExpectSlots(w, 4096, 9);
  MPI_Barrier(MPI_COMM_WORLD);
}

// A strided target layout is no single RMA operation: moved as agent
// requests, not counted, exact all the same.
TEST_P(AgentRma, StridedPutIsExactWithoutRma) {
  const int rank = Rank(), size = Size();
  const std::vector<bool> local = NodeLocalRanks();
  Window w(GetParam());
  MPI_Datatype every_other;
  MPI_Type_vector(64, 1, 2, MPI_INT64_T, &every_other);
  MPI_Type_commit(&every_other);
  std::vector<int64_t> mine(64);
  for (int i = 0; i < 64; ++i) mine[i] = rank * 1000 + i + 1;
  const long long before = AgentRmaOps();
  MPI_Win_lock_all(0, w.win());
  for (int t = 0; t < size; ++t) {
    if (local[t]) continue;
    MPI_Put(mine.data(), 64, MPI_INT64_T, t,
            static_cast<MPI_Aint>(kSlot) * rank, 1, every_other, w.win());
  }
  MPI_Win_unlock_all(w.win());
  EXPECT_EQ(AgentRmaOps(), before);
  MPI_Type_free(&every_other);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int o = 0; o < size; ++o) {
    if (local[o]) continue;
    const auto* got = reinterpret_cast<const int64_t*>(w.slot(o));
    for (int i = 0; i < 64; ++i) {
      ASSERT_EQ(got[2 * i], o * 1000 + i + 1) << "origin " << o;
      ASSERT_EQ(got[2 * i + 1], 0) << "origin " << o;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

INSTANTIATE_TEST_SUITE_P(Memories, AgentRma,
                         ::testing::Values(Memory::kAllocate, Memory::kCreate),
                         [](const auto& info) {
                           return info.param == Memory::kAllocate ? "allocate"
                                                                  : "create";
                         });

}  // namespace
