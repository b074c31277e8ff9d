// Put and get with predefined and derived datatypes on either or both sides,
// to every rank (self, node-local peers, other nodes). Each operation runs on
// a managed window and on a native (opt-out) window in the same program; both
// must leave every byte exactly where a local pack/unpack model puts it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::IsManaged;
using rmashim_test::OptOutInfo;
using rmashim_test::PatternByte;
using rmashim_test::Rank;
using rmashim_test::Size;

// Every origin owns one region of every target's window per case; buffers
// are patterned so every misplaced or stray byte is visible.
constexpr MPI_Aint kOriginBytes = 4608;
constexpr int kOriginSalt = 1, kWindowSalt = 2, kResultSalt = 3;

// One side of an access: `count` elements of `type`, starting `offset` bytes
// into the buffer (or into the origin's region of the target window).
struct Side {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int count = 0;
  MPI_Aint offset = 0;
};

struct Case {
  const char* name;
  Side (*origin)();
  Side (*target)();
};

MPI_Datatype Commit(MPI_Datatype t) {
  MPI_Type_commit(&t);
  return t;
}

MPI_Datatype Vector(int count, int block, int stride, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_vector(count, block, stride, old, &t);
  return Commit(t);
}

MPI_Datatype Resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent) {
  MPI_Datatype t;
  MPI_Type_create_resized(old, lb, extent, &t);
  return Commit(t);
}

bool IsPredefined(MPI_Datatype type) {
  int ints = 0, addrs = 0, types = 0, combiner = 0;
  MPI_Type_get_envelope(type, &ints, &addrs, &types, &combiner);
  return combiner == MPI_COMBINER_NAMED;
}

void FreeType(MPI_Datatype type) {
  if (!IsPredefined(type)) MPI_Type_free(&type);
}

// A derived type built from `inner`, which is freed (the new type keeps
// what it needs).
template <typename Build>
MPI_Datatype Wrap(MPI_Datatype inner, Build build) {
  MPI_Datatype t = build(inner);
  FreeType(inner);
  return t;
}

Side Ints(int n) { return {MPI_INT, n, 8}; }

// An {int, int, double, int} record at the given byte displacements.
MPI_Datatype MixedStruct(MPI_Aint ints_at, MPI_Aint double_at,
                         MPI_Aint int_at) {
  const int blocks[] = {2, 1, 1};
  const MPI_Aint displs[] = {ints_at, double_at, int_at};
  const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_INT};
  MPI_Datatype t;
  MPI_Type_create_struct(3, blocks, displs, types, &t);
  return Commit(t);
}

// One line per side reads better than what clang-format makes of it.
// clang-format off
const Case kCases[] = {
    {"ContiguousBoth", [] { return Ints(8); },
     [] { return Side{MPI_INT, 8, 4}; }},
    {"VectorTarget", [] { return Ints(8); },
     [] { return Side{Vector(4, 2, 5, MPI_INT), 1, 0}; }},
    {"VectorOrigin", [] { return Side{Vector(4, 2, 3, MPI_INT), 1, 4}; },
     [] { return Side{MPI_INT, 8, 12}; }},
    {"VectorBothCountTwo",
     [] { return Side{Vector(2, 3, 4, MPI_INT), 2, 0}; },
     [] { return Side{Vector(3, 2, 5, MPI_INT), 2, 4}; }},
    {"HvectorTarget", [] { return Ints(6); },
     [] {
       MPI_Datatype t;
       MPI_Type_create_hvector(3, 2, 20, MPI_INT, &t);
       return Side{Commit(t), 1, 0};
     }},
    {"IndexedTargetVectorOrigin",
     [] { return Side{Vector(3, 3, 4, MPI_INT), 1, 0}; },
     [] {
       const int blocks[] = {2, 3, 4}, displs[] = {0, 5, 12};
       MPI_Datatype t;
       MPI_Type_indexed(3, blocks, displs, MPI_INT, &t);
       return Side{Commit(t), 1, 4};
     }},
    {"IndexedBlockUnsorted", [] { return Ints(8); },
     [] {
       const int displs[] = {9, 0, 6, 3};  // type-map order, not address order
       MPI_Datatype t;
       MPI_Type_create_indexed_block(4, 2, displs, MPI_INT, &t);
       return Side{Commit(t), 1, 0};
     }},
    {"HindexedNegativeDisplacement", [] { return Ints(4); },
     [] {
       const int blocks[] = {2, 2};
       const MPI_Aint displs[] = {8, -8};
       MPI_Datatype t;
       MPI_Type_create_hindexed(2, blocks, displs, MPI_INT, &t);
       return Side{Commit(t), 1, 16};  // touches region bytes [8, 32)
     }},
    {"StructOfIntsTarget", [] { return Ints(4); },
     [] {
       const int blocks[] = {1, 2, 1};
       const MPI_Aint displs[] = {0, 12, 28};
       const MPI_Datatype types[] = {MPI_INT, MPI_INT, MPI_INT};
       MPI_Datatype t;
       MPI_Type_create_struct(3, blocks, displs, types, &t);
       return Side{Commit(t), 1, 0};
     }},
    {"StructMixedBothCountTwo",
     [] { return Side{MixedStruct(0, 8, 16), 2, 0}; },
     [] { return Side{MixedStruct(4, 16, 32), 2, 8}; }},
    {"ResizedExtentBeyondSizeTarget", [] { return Ints(5); },
     [] { return Side{Resized(MPI_INT, 0, 12), 5, 4}; }},
    {"ResizedBoth", [] { return Side{Resized(MPI_INT, 0, 8), 6, 0}; },
     [] { return Side{Resized(MPI_INT, 0, 20), 6, 0}; }},
    {"ResizedNegativeLowerBound", [] { return Ints(6); },
     [] {
       return Side{Wrap(Vector(2, 1, 3, MPI_INT),
                        [](MPI_Datatype v) { return Resized(v, -4, 20); }),
                   3, 4};
     }},
    {"SubarrayTarget", [] { return Ints(12); },
     [] {
       const int sizes[] = {6, 8}, subsizes[] = {3, 4}, starts[] = {1, 2};
       MPI_Datatype t;
       MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C,
                                MPI_INT, &t);
       return Side{Commit(t), 1, 0};
     }},
    {"SubarrayFortranOrderOrigin",
     [] {
       const int sizes[] = {5, 6}, subsizes[] = {2, 3}, starts[] = {2, 1};
       MPI_Datatype t;
       MPI_Type_create_subarray(2, sizes, subsizes, starts,
                                MPI_ORDER_FORTRAN, MPI_INT, &t);
       return Side{Commit(t), 1, 0};
     },
     [] { return Side{MPI_INT, 6, 20}; }},
    {"ContiguousOfVectorTarget", [] { return Ints(8); },
     [] {
       return Side{Wrap(Vector(2, 2, 3, MPI_INT),
                        [](MPI_Datatype v) {
                          MPI_Datatype t;
                          MPI_Type_contiguous(2, v, &t);
                          return Commit(t);
                        }),
                   1, 0};
     }},
    {"DerivedButDenseBoth",
     [] {
       MPI_Datatype t;
       MPI_Type_contiguous(6, MPI_INT, &t);
       return Side{Commit(t), 1, 0};
     },
     [] {
       MPI_Datatype t;
       MPI_Type_contiguous(3, MPI_INT, &t);
       return Side{Commit(t), 2, 4};
     }},
    {"DoublesIntoStridedDoubles", [] { return Side{MPI_DOUBLE, 3, 0}; },
     [] { return Side{Vector(3, 1, 2, MPI_DOUBLE), 1, 8}; }},
    // More separate blocks than one process_vm_writev/readv call takes
    // (IOV_MAX is 1024).
    {"VectorOfMoreBlocksThanIovMax", [] { return Ints(1100); },
     [] { return Side{Vector(1100, 1, 3, MPI_INT), 1, 4}; }},
    {"ZeroCount", [] { return Side{Vector(2, 1, 2, MPI_INT), 0, 0}; },
     [] { return Side{MPI_INT, 0, 0}; }},
};
// clang-format on

// Copies `src` (laid out as `from`) into `dst` (laid out as `to`) the way
// MPI moves RMA data: pack the source in type-map order, unpack into the
// destination.
void ModelCopy(const std::byte* src, const Side& from, std::byte* dst,
               const Side& to) {
  int bytes = 0;
  MPI_Pack_size(from.count, from.type, MPI_COMM_SELF, &bytes);
  std::vector<char> packed(bytes + 1);
  int position = 0;
  MPI_Pack(src + from.offset, from.count, from.type, packed.data(), bytes,
           &position, MPI_COMM_SELF);
  const int used = position;
  position = 0;
  MPI_Unpack(packed.data(), used, &position, dst + to.offset, to.count, to.type,
             MPI_COMM_SELF);
}

// [lo, hi) bytes touched by `side`, relative to its buffer.
std::pair<MPI_Aint, MPI_Aint> Span(const Side& side) {
  if (side.count == 0) return {side.offset, side.offset};
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPI_Type_get_extent(side.type, &lb, &extent);
  MPI_Type_get_true_extent(side.type, &true_lb, &true_extent);
  const MPI_Aint lo = side.offset + true_lb;
  return {lo, lo + (side.count - 1) * extent + true_extent};
}

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

constexpr int kNumCases = int(std::size(kCases));

// The cases' datatypes, built once per test and freed at its end.
struct CaseTypes {
  std::vector<Side> origin, target;
  CaseTypes() {
    for (const Case& c : kCases) {
      origin.push_back(c.origin());
      target.push_back(c.target());
    }
  }
  ~CaseTypes() {
    for (const Side& s : origin) FreeType(s.type);
    for (const Side& s : target) FreeType(s.type);
  }
};

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
