// Put and get with predefined and derived datatypes on either or both sides,
// to every rank (self, node-local peers, other nodes). Each operation runs on
// a managed window and on a native (opt-out) window in the same program; both
// must leave every byte exactly where a local pack/unpack model puts it. The
// cases and the model are in shim_datatype_cases.h.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "tests/mpi/shim_datatype_cases.h"
#include "tests/mpi_test_util.h"

namespace rmashim_test::datatype {
namespace {

// Every origin owns one region of every target's window per case; buffers
// are patterned so every misplaced or stray byte is visible.
constexpr MPI_Aint kOriginBytes = 4608;
constexpr int kOriginSalt = 1, kWindowSalt = 2, kResultSalt = 3;

std::vector<std::byte> Patterned(int owner, MPI_Aint bytes, int salt) {
  std::vector<std::byte> v(bytes);
  for (MPI_Aint i = 0; i < bytes; ++i) v[i] = PatternByte(owner, i, salt);
  return v;
}

// Byte offset of the first difference, or -1.
MPI_Aint FirstDifference(const std::byte* a, const std::byte* b,
                         MPI_Aint bytes) {
  for (MPI_Aint i = 0; i < bytes; ++i) {
    if (a[i] != b[i]) return i;
  }
  return -1;
}

enum class Sync { kLockAll, kFence, kLockExclusive };

// Which call creates the windows: MPI_Win_allocate (managed through
// node-shared memory) or MPI_Win_create (which the shim may manage through
// cross-memory attach).
enum class Flavor { kAllocate, kCreate };

struct Param {
  Flavor flavor;
  bool put;
  Sync sync;
};

std::string ParamName(const testing::TestParamInfo<Param>& info) {
  static const char* kSync[] = {"LockAll", "Fence", "LockExclusive"};
  return std::string(info.param.flavor == Flavor::kAllocate ? "Allocate"
                                                            : "Create") +
         (info.param.put ? "Put" : "Get") +
         kSync[static_cast<int>(info.param.sync)];
}

// Every case gets its own slice of every window, and in it each origin its
// own region sized for the case, so all cases run in one epoch (collectives
// are what makes oversubscribed runs slow).
struct Geometry {
  std::vector<MPI_Aint> region;       // bytes per origin, per case
  std::vector<MPI_Aint> slice_start;  // per case
  MPI_Aint window_bytes = 0;          // a multiple of 16
};

const Geometry& GetGeometry() {
  static const Geometry geometry = [] {
    Geometry g;
    const CaseTypes types;
    const int size = Size();
    for (int c = 0; c < kNumCases; ++c) {
      const MPI_Aint hi = std::max<MPI_Aint>(Span(types.target[c]).second, 64);
      g.region.push_back((hi + 63) / 64 * 64);
      g.slice_start.push_back(g.window_bytes);
      g.window_bytes += size * g.region.back();
    }
    return g;
  }();
  return geometry;
}

MPI_Aint RegionStart(int case_index, int origin) {
  const Geometry& g = GetGeometry();
  return g.slice_start[case_index] + origin * g.region[case_index];
}

// A window of either flavor; freed (collectively) on destruction.
class TestWindow {
 public:
  TestWindow(Flavor flavor, MPI_Aint bytes, MPI_Info info) {
    if (flavor == Flavor::kAllocate) {
      MPI_Win_allocate(bytes, 1, info, MPI_COMM_WORLD, &base_, &win_);
    } else {
      storage_.resize(bytes);
      base_ = storage_.data();
      MPI_Win_create(base_, bytes, 1, info, MPI_COMM_WORLD, &win_);
    }
  }
  ~TestWindow() { MPI_Win_free(&win_); }
  TestWindow(const TestWindow&) = delete;
  TestWindow& operator=(const TestWindow&) = delete;
  MPI_Win win() const { return win_; }
  std::byte* base() const { return static_cast<std::byte*>(base_); }

 private:
  std::vector<std::byte> storage_;
  void* base_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
};

class ShimDatatypeTest : public testing::TestWithParam<Param> {
 protected:
  // Per flavor one window left to the shim and one opted out (native), for
  // the whole suite: window creation is slow on oversubscribed nodes.
  static void SetUpTestSuite() {
    const MPI_Aint bytes = WindowBytes();  // a multiple of 16
    OptOutInfo opt_out;
    for (Flavor f : {Flavor::kAllocate, Flavor::kCreate}) {
      shim_[int(f)] = new TestWindow(f, bytes, MPI_INFO_NULL);
      native_[int(f)] = new TestWindow(f, bytes, opt_out.get());
    }
  }
  static void TearDownTestSuite() {
    for (int f = 0; f < 2; ++f) {
      delete shim_[f];
      delete native_[f];
    }
  }
  static MPI_Aint WindowBytes() { return GetGeometry().window_bytes; }

  // Refills both windows of `flavor` with this rank's pattern.
  static void ResetWindows(Flavor flavor) {
    const std::vector<std::byte> fill =
        Patterned(Rank(), WindowBytes(), kWindowSalt);
    std::memcpy(shim_[int(flavor)]->base(), fill.data(), fill.size());
    std::memcpy(native_[int(flavor)]->base(), fill.data(), fill.size());
    MPI_Barrier(MPI_COMM_WORLD);
  }

  static TestWindow* shim_[2];
  static TestWindow* native_[2];
};

TestWindow* ShimDatatypeTest::shim_[2] = {};
TestWindow* ShimDatatypeTest::native_[2] = {};

// Runs `access(target)` for every target of `win` inside one epoch of kind
// `sync`.
template <typename Access>
void ForEachTargetInEpoch(MPI_Win win, Sync sync, Access access) {
  const int size = Size();
  switch (sync) {
    case Sync::kLockAll:
      MPI_Win_lock_all(0, win);
      for (int t = 0; t < size; ++t) access(t);
      MPI_Win_unlock_all(win);
      break;
    case Sync::kFence:
      MPI_Win_fence(0, win);
      for (int t = 0; t < size; ++t) access(t);
      MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
      break;
    case Sync::kLockExclusive:
      for (int t = 0; t < size; ++t) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
        access(t);
        MPI_Win_unlock(t, win);
      }
      break;
  }
}

TEST_P(ShimDatatypeTest, EveryCaseMatchesModelAndNativeMpi) {
  const Param& p = GetParam();
  const int rank = Rank(), size = Size();
  // A deadlock in a passed-through transfer would otherwise sit until
  // mpirun's timeout.
  rmashim_test::HangWatchdog watchdog(30, "datatype test");
  TestWindow* const managed = shim_[int(p.flavor)];
  TestWindow* const native = native_[int(p.flavor)];
  // MPI_Win_create windows stay with MPI when the kernel refuses
  // cross-memory attach; the comparison still holds then.
  if (p.flavor == Flavor::kAllocate) {
    ASSERT_TRUE(IsManaged(managed->win()));
  }
  ASSERT_FALSE(IsManaged(native->win()));
  const CaseTypes types;
  // Each case must fit its buffers, or the test itself would be erroneous.
  for (int c = 0; c < kNumCases; ++c) {
    const auto [olo, ohi] = Span(types.origin[c]);
    const auto [tlo, thi] = Span(types.target[c]);
    ASSERT_GE(olo, 0) << kCases[c].name;
    ASSERT_LE(ohi, kOriginBytes) << kCases[c].name;
    ASSERT_GE(tlo, 0) << kCases[c].name;
    ASSERT_LE(thi, GetGeometry().region[c]) << kCases[c].name;
  }
  ResetWindows(p.flavor);
  const MPI_Aint window_bytes = WindowBytes();

  if (p.put) {
    const std::vector<std::byte> origin_buf =
        Patterned(rank, kOriginBytes, kOriginSalt);
    for (TestWindow* w : {managed, native}) {
      ForEachTargetInEpoch(w->win(), p.sync, [&](int t) {
        for (int c = 0; c < kNumCases; ++c) {
          const Side &o = types.origin[c], &tg = types.target[c];
          EXPECT_EQ(MPI_Put(origin_buf.data() + o.offset, o.count, o.type, t,
                            RegionStart(c, rank) + tg.offset, tg.count, tg.type,
                            w->win()),
                    MPI_SUCCESS)
              << kCases[c].name << ", target " << t;
        }
      });
    }
    MPI_Barrier(MPI_COMM_WORLD);
    // Model: this rank's window after every origin's puts.
    std::vector<std::byte> expected =
        Patterned(rank, window_bytes, kWindowSalt);
    for (int o = 0; o < size; ++o) {
      const std::vector<std::byte> their =
          Patterned(o, kOriginBytes, kOriginSalt);
      for (int c = 0; c < kNumCases; ++c) {
        ModelCopy(their.data(), types.origin[c],
                  expected.data() + RegionStart(c, o), types.target[c]);
      }
    }
    for (int c = 0; c < kNumCases; ++c) {
      for (int o = 0; o < size; ++o) {
        const MPI_Aint start = RegionStart(c, o);
        const std::byte* model = expected.data() + start;
        const MPI_Aint region = GetGeometry().region[c];
        EXPECT_EQ(FirstDifference(native->base() + start, model, region), -1)
            << kCases[c].name << ": native MPICH differs from the model, "
            << "origin " << o;
        EXPECT_EQ(FirstDifference(managed->base() + start, model, region), -1)
            << kCases[c].name << ": managed window differs from the model, "
            << "origin " << o;
      }
    }
    // And nothing outside the regions (there is nothing outside them, but
    // the whole-window comparison guards the arithmetic above).
    EXPECT_EQ(FirstDifference(managed->base(), native->base(), window_bytes),
              -1)
        << "managed window differs from native MPICH";
  } else {
    // One result buffer per (case, target), patterned with the origin's
    // salt; each origin reads its own region of every target.
    const std::vector<std::byte> fresh =
        Patterned(rank, kOriginBytes, kResultSalt);
    std::vector<std::vector<std::byte>> got_managed(kNumCases * size, fresh),
        got_native(kNumCases * size, fresh);
    for (TestWindow* w : {managed, native}) {
      auto& got = w == managed ? got_managed : got_native;
      ForEachTargetInEpoch(w->win(), p.sync, [&](int t) {
        for (int c = 0; c < kNumCases; ++c) {
          const Side &o = types.origin[c], &tg = types.target[c];
          EXPECT_EQ(MPI_Get(got[c * size + t].data() + o.offset, o.count,
                            o.type, t, RegionStart(c, rank) + tg.offset,
                            tg.count, tg.type, w->win()),
                    MPI_SUCCESS)
              << kCases[c].name << ", target " << t;
        }
      });
    }
    for (int t = 0; t < size; ++t) {
      const std::vector<std::byte> their_window =
          Patterned(t, window_bytes, kWindowSalt);
      for (int c = 0; c < kNumCases; ++c) {
        std::vector<std::byte> expected = fresh;
        ModelCopy(their_window.data() + RegionStart(c, rank), types.target[c],
                  expected.data(), types.origin[c]);
        EXPECT_EQ(FirstDifference(got_native[c * size + t].data(),
                                  expected.data(), kOriginBytes),
                  -1)
            << kCases[c].name << ": native MPICH differs from the model, "
            << "target " << t;
        EXPECT_EQ(FirstDifference(got_managed[c * size + t].data(),
                                  expected.data(), kOriginBytes),
                  -1)
            << kCases[c].name << ": managed window differs from the model, "
            << "target " << t;
      }
    }
    // A get must not disturb the target.
    MPI_Barrier(MPI_COMM_WORLD);
    const std::vector<std::byte> fill =
        Patterned(rank, window_bytes, kWindowSalt);
    EXPECT_EQ(FirstDifference(managed->base(), fill.data(), window_bytes), -1);
  }
  MPI_Barrier(MPI_COMM_WORLD);  // nobody resets while others still read
}

std::vector<Param> AllParams() {
  std::vector<Param> params;
  for (Flavor f : {Flavor::kAllocate, Flavor::kCreate}) {
    for (bool put : {true, false}) {
      for (Sync sync : {Sync::kLockAll, Sync::kFence, Sync::kLockExclusive}) {
        params.push_back({f, put, sync});
      }
    }
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(AllCases, ShimDatatypeTest,
                         testing::ValuesIn(AllParams()), ParamName);

}  // namespace
}  // namespace rmashim_test::datatype
