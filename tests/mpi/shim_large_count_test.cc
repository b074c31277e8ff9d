// Transfers of more than 2 GiB through a derived datatype, where byte
// counts no longer fit an int: MPI_Put and MPI_Get of ~2.1 GiB between a
// contiguous origin buffer and a strided (vector) target layout, on managed
// MPI_Win_allocate windows (pack engine into mapped memory) and
// MPI_Win_create windows (cross-memory attach), the strided side being the
// target's or the origin's (one vector element of more than 2 GiB). Rank 0
// is the origin, rank 1 the target (2 ranks, one node); every element is
// checked.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::IsManaged;
using rmashim_test::Rank;

// Target layout: blocks of kBlock elements, kStride apart (one element of
// every block left alone, so the type is not contiguous).
constexpr MPI_Aint kBlock = 1023, kStride = 1024;
constexpr uint64_t kUntouched = 0x5a5a5a5a5a5a5a5aull;

// Read once: the fill and check loops ask for it per element.
MPI_Aint Blocks() {
  // 2.125 GiB of payload by default (LARGE_COUNT_MIB to change it).
  static const MPI_Aint blocks = rmashim_test::EnvInt("LARGE_COUNT_MIB", 2176) *
                                 (MPI_Aint{1} << 20) / (kBlock * 8);
  return blocks;
}

uint64_t Value(MPI_Aint i) {
  return static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ull + 1;
}

// The strided layout: one vector of every block (a single element of more
// than 2 GiB).
struct StridedType {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  StridedType() {
    MPI_Type_vector(static_cast<int>(Blocks()), kBlock, kStride, MPI_UINT64_T,
                    &type);
    MPI_Type_commit(&type);
  }
  ~StridedType() { MPI_Type_free(&type); }
};

MPI_Aint Elements() { return Blocks() * kBlock; }
MPI_Aint StridedSlots() { return Blocks() * kStride; }
// Where payload element i sits in the strided layout.
MPI_Aint StridedPos(MPI_Aint i) { return i / kBlock * kStride + i % kBlock; }

// Counts the slots of `mem` that differ from payload element order: the
// strided layout (gaps must hold kUntouched) or the dense one.
MPI_Aint CountWrong(const uint64_t* mem, bool strided, MPI_Aint* first) {
  MPI_Aint wrong = 0;
  *first = -1;
  const MPI_Aint slots = strided ? StridedSlots() : Elements();
  for (MPI_Aint k = 0; k < slots; ++k) {
    const MPI_Aint b = k / kStride, j = k % kStride;
    uint64_t want = Value(k);
    if (strided) want = j < kBlock ? Value(b * kBlock + j) : kUntouched;
    if (mem[k] != want && wrong++ == 0) *first = k;
  }
  return wrong;
}

void Fill(uint64_t* mem, bool strided) {
  if (!strided) {
    for (MPI_Aint i = 0; i < Elements(); ++i) mem[i] = Value(i);
    return;
  }
  for (MPI_Aint k = 0; k < StridedSlots(); ++k) mem[k] = kUntouched;
  for (MPI_Aint i = 0; i < Elements(); ++i) mem[StridedPos(i)] = Value(i);
}

void Clear(uint64_t* mem, bool strided) {
  const MPI_Aint slots = strided ? StridedSlots() : Elements();
  for (MPI_Aint k = 0; k < slots; ++k) mem[k] = kUntouched;
}

// The origin's buffer, as large as the strided layout, one for the whole
// run: a fresh 2 GiB buffer per test cost more in page faults (the kernel
// zeroing every page) than its transfer and its checks. The target's
// MPI_Win_create memory stays fresh per test: the shim shares it for the
// window's life (shim/windows/shared_user_memory.h), and a second window
// over the same pages took twice as long.
uint64_t* OriginBuffer() {
  static const std::unique_ptr<uint64_t[]> buffer(new uint64_t[StridedSlots()]);
  return buffer.get();
}

// Rank 0 puts the whole payload into rank 1's window (the target side is
// strided when `target_strided`, else the origin side), rank 1 checks it,
// rank 0 gets it back into a cleared buffer and checks that.
void PutAndGetBack(MPI_Win win, uint64_t* target_mem, bool target_strided) {
  const int rank = Rank();
  ASSERT_LT(Elements(), MPI_Aint{INT32_MAX});
  ASSERT_GT(Elements() * 8, MPI_Aint{1} << 31) << "not a large-count transfer";
  StridedType strided;
  MPI_Count type_bytes = 0;
  MPI_Type_size_x(strided.type, &type_bytes);
  ASSERT_EQ(type_bytes, Elements() * 8);
  const int dense_count = static_cast<int>(Elements());
  const bool origin_strided = !target_strided;
  uint64_t* const origin = rank == 0 ? OriginBuffer() : nullptr;
  if (rank == 0) {
    Fill(origin, origin_strided);
  } else {
    Clear(target_mem, target_strided);
  }
  // (count, type) of each side.
  const int o_count = origin_strided ? 1 : dense_count;
  const MPI_Datatype o_type = origin_strided ? strided.type : MPI_UINT64_T;
  const int t_count = target_strided ? 1 : dense_count;
  const MPI_Datatype t_type = target_strided ? strided.type : MPI_UINT64_T;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, win);
  if (rank == 0) {
    EXPECT_EQ(MPI_Put(origin, o_count, o_type, 1, 0, t_count, t_type, win),
              MPI_SUCCESS);
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Aint first = -1;
  if (rank == 1) {
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);  // public copy -> private
    MPI_Win_unlock(1, win);
    EXPECT_EQ(CountWrong(target_mem, target_strided, &first), 0)
        << "target elements wrong, first at " << first;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    Clear(origin, origin_strided);
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    EXPECT_EQ(MPI_Get(origin, o_count, o_type, 1, 0, t_count, t_type, win),
              MPI_SUCCESS);
    MPI_Win_unlock(1, win);
    EXPECT_EQ(CountWrong(origin, origin_strided, &first), 0)
        << "elements read back wrong, first at " << first;
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

MPI_Aint TargetSlots(bool target_strided) {
  if (Rank() != 1) return 0;
  return target_strided ? StridedSlots() : Elements();
}

// Parameter: whether the target side is the strided one.
class LargeCountTest : public testing::TestWithParam<bool> {};

TEST_P(LargeCountTest, AllocateWindow) {
  void* base = nullptr;
  MPI_Win win;
  ASSERT_EQ(MPI_Win_allocate(TargetSlots(GetParam()) * 8, 8, MPI_INFO_NULL,
                             MPI_COMM_WORLD, &base, &win),
            MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(win));
  PutAndGetBack(win, static_cast<uint64_t*>(base), GetParam());
  MPI_Win_free(&win);
}

TEST_P(LargeCountTest, CreateWindow) {
  const MPI_Aint slots = TargetSlots(GetParam());
  std::unique_ptr<uint64_t[]> mem(slots > 0 ? new uint64_t[slots] : nullptr);
  MPI_Win win;
  ASSERT_EQ(MPI_Win_create(mem.get(), slots * 8, 8, MPI_INFO_NULL,
                           MPI_COMM_WORLD, &win),
            MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(win));
  PutAndGetBack(win, mem.get(), GetParam());
  MPI_Win_free(&win);
}

INSTANTIATE_TEST_SUITE_P(Strided, LargeCountTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& p) {
                           return p.param ? "TargetSide" : "OriginSide";
                         });

}  // namespace
