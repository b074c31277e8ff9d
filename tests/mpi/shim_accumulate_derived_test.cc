// The accumulate family through derived datatypes: vector, indexed,
// subarray and resized types on the origin, target and result sides of
// MPI_Accumulate and MPI_Get_accumulate, on a managed and a native (opt-out)
// window in the same program; both must match an element-index model of
// the types (values from tests/mpi/shim_accumulate_util.h), and each other.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tests/mpi/shim_accumulate_util.h"
#include "tests/mpi_test_util.h"

namespace rmashim_test::accumulate {
namespace {

// One side of a derived-type access: the datatype (freed by the owner) and
// the element indices it touches, in type-map order.
struct Side {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int count = 1;
  std::vector<int> elems;
  bool derived = true;
};

MPI_Datatype Commit(MPI_Datatype t) {
  MPI_Type_commit(&t);
  return t;
}

Side Contig(MPI_Datatype base, int n) {
  Side s{base, n, {}, false};
  for (int i = 0; i < n; ++i) s.elems.push_back(i);
  return s;
}

// `count` copies of vector(blocks, block, stride).
Side Vector(MPI_Datatype base, int blocks, int block, int stride,
            int count = 1) {
  MPI_Datatype t;
  MPI_Type_vector(blocks, block, stride, base, &t);
  Side s{Commit(t), count, {}};
  const int extent = (blocks - 1) * stride + block;
  for (int c = 0; c < count; ++c) {
    for (int b = 0; b < blocks; ++b) {
      for (int i = 0; i < block; ++i) {
        s.elems.push_back(c * extent + b * stride + i);
      }
    }
  }
  return s;
}

Side Indexed(MPI_Datatype base, std::vector<int> blocks,
             std::vector<int> displs) {
  MPI_Datatype t;
  MPI_Type_indexed(static_cast<int>(blocks.size()), blocks.data(),
                   displs.data(), base, &t);
  Side s{Commit(t), 1, {}};
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (int i = 0; i < blocks[b]; ++i) s.elems.push_back(displs[b] + i);
  }
  return s;
}

// A rows x cols C-order array's sub-block.
Side Subarray(MPI_Datatype base, int rows, int cols, int sub_rows, int sub_cols,
              int row0, int col0) {
  const int sizes[] = {rows, cols}, subsizes[] = {sub_rows, sub_cols},
            starts[] = {row0, col0};
  MPI_Datatype t;
  MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, base, &t);
  Side s{Commit(t), 1, {}};
  for (int r = 0; r < sub_rows; ++r) {
    for (int c = 0; c < sub_cols; ++c) {
      s.elems.push_back((row0 + r) * cols + col0 + c);
    }
  }
  return s;
}

// `count` elements `stride_elems` apart through a resized base type.
Side Strided(MPI_Datatype base, int base_extent, int stride_elems, int count) {
  MPI_Datatype t;
  MPI_Type_create_resized(base, 0, MPI_Aint{stride_elems} * base_extent, &t);
  Side s{Commit(t), count, {}};
  for (int i = 0; i < count; ++i) s.elems.push_back(i * stride_elems);
  return s;
}

void Free(Side& s) {
  if (s.derived) MPI_Type_free(&s.type);
}

struct DerivedCase {
  std::string name;
  std::string type;
  MPI_Op op;
  std::function<Side(MPI_Datatype, int)> origin, target, result;
};

constexpr int kBlockElems = 24;  // elements per block of a derived case

std::vector<DerivedCase> DerivedCases() {
  using S = std::function<Side(MPI_Datatype, int)>;
  auto contig = [](int n) -> S {
    return [n](MPI_Datatype b, int) { return Contig(b, n); };
  };
  auto vector = [](int blocks, int block, int stride, int count = 1) -> S {
    return [=](MPI_Datatype b, int) {
      return Vector(b, blocks, block, stride, count);
    };
  };
  auto indexed = [](std::vector<int> blocks, std::vector<int> displs) -> S {
    return [=](MPI_Datatype b, int) { return Indexed(b, blocks, displs); };
  };
  auto subarray = [](int rows, int cols, int sr, int sc, int r0, int c0) -> S {
    return [=](MPI_Datatype b, int) {
      return Subarray(b, rows, cols, sr, sc, r0, c0);
    };
  };
  auto strided = [](int stride, int count) -> S {
    return [=](MPI_Datatype b, int extent) {
      return Strided(b, extent, stride, count);
    };
  };
  return {
      {"VectorTarget", "MPI_INT", MPI_SUM, contig(6), vector(3, 2, 4), {}},
      {"VectorOriginIndexedTarget",
       "MPI_DOUBLE",
       MPI_MAX,
       vector(3, 1, 2),
       indexed({1, 2}, {3, 7}),
       {}},
      {"SubarrayTarget",
       "MPI_UNSIGNED_SHORT",
       MPI_BXOR,
       contig(6),
       subarray(4, 6, 2, 3, 1, 2),
       {}},
      {"PairVectorTarget",
       "MPI_DOUBLE_INT",
       MPI_MINLOC,
       contig(3),
       vector(3, 1, 3),
       {}},
      {"WideComplexBothDerived",
       "MPI_C_LONG_DOUBLE_COMPLEX",
       MPI_SUM,
       indexed({2, 1}, {0, 3}),
       vector(3, 1, 2),
       {}},
      {"VectorCountTwo",
       "MPI_INT64_T",
       MPI_BOR,
       contig(8),
       vector(2, 2, 3, 2),
       {}},
      {"ResizedTarget",
       "MPI_FLOAT",
       MPI_PROD,
       subarray(2, 3, 2, 2, 0, 1),
       strided(3, 4),
       {}},
      {"GetAccVectorResult", "MPI_INT64_T", MPI_SUM, vector(2, 2, 3),
       indexed({1, 3}, {5, 0}), vector(4, 1, 2)},
      {"GetAccNoOpSubarrayResult", "MPI_INT", MPI_NO_OP, contig(6),
       vector(3, 2, 3), subarray(3, 4, 2, 3, 1, 1)},
      {"GetAccPairResult", "MPI_LONG_DOUBLE_INT", MPI_MAXLOC, contig(3),
       indexed({2, 1}, {1, 5}), strided(2, 3)},
  };
}

// Where a derived case lives in its target's window: the shared block,
// then one own block per origin (fetching cases use those).
struct DerivedPlace {
  const TypeCase* type;
  int target;
  MPI_Aint offset;
  size_t block;  // bytes per block
};

std::vector<DerivedPlace> PlaceDerived(const std::vector<DerivedCase>& cases,
                                       int size, MPI_Aint* window_bytes) {
  std::vector<DerivedPlace> places;
  std::vector<MPI_Aint> used(size, 0);
  for (size_t i = 0; i < cases.size(); ++i) {
    const TypeCase& t = TypeNamed(cases[i].type);
    const int target = static_cast<int>(i) % size;
    const size_t block = size_t{kBlockElems} * t.extent;
    places.push_back({&t, target, used[target], block});
    used[target] += ((1 + size) * block + 63) / 64 * 64;
  }
  *window_bytes = *std::max_element(used.begin(), used.end());
  return places;
}

// Every origin accumulates through each case's types into the case's
// shared block (or, fetching, get_accumulates into its own block), all
// cases in one lock_all epoch. Returns this origin's result buffers.
std::vector<std::vector<std::byte>> RunDerived(
    MPI_Win win, std::byte* base, const std::vector<DerivedCase>& cases,
    const std::vector<DerivedPlace>& places) {
  const int rank = Rank(), size = Size();
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);  // local init, in an epoch
  for (size_t i = 0; i < cases.size(); ++i) {
    const DerivedPlace& p = places[i];
    if (p.target != rank) continue;
    for (int b = 0; b <= size; ++b) {
      const auto init =
          Values(*p.type, cases[i].op, p.target, static_cast<int>(i),
                 kSharedInit, kBlockElems, b);
      std::memcpy(base + p.offset + b * p.block, init.data(), p.block);
    }
  }
  MPI_Win_unlock(rank, win);
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<std::vector<std::byte>> origins, results;
  EXPECT_EQ(MPI_Win_lock_all(0, win), MPI_SUCCESS);
  for (size_t i = 0; i < cases.size(); ++i) {
    const DerivedCase& c = cases[i];
    const DerivedPlace& p = places[i];
    const TypeCase& t = *p.type;
    Side origin = c.origin(t.type, t.extent);
    Side target = c.target(t.type, t.extent);
    origins.push_back(
        Values(t, c.op, rank, static_cast<int>(i), kAccValue, kBlockElems));
    results.emplace_back(p.block, std::byte{0xee});
    if (c.result) {
      Side result = c.result(t.type, t.extent);
      EXPECT_EQ(
          MPI_Get_accumulate(origins.back().data(), origin.count, origin.type,
                             results.back().data(), result.count, result.type,
                             p.target, p.offset + (1 + rank) * p.block,
                             target.count, target.type, c.op, win),
          MPI_SUCCESS)
          << c.name;
      Free(result);
    } else {
      EXPECT_EQ(MPI_Accumulate(origins.back().data(), origin.count, origin.type,
                               p.target, p.offset, target.count, target.type,
                               c.op, win),
                MPI_SUCCESS)
          << c.name;
    }
    Free(origin);
    Free(target);
  }
  EXPECT_EQ(MPI_Win_unlock_all(win), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  return results;
}

// Origins accumulate through vector, indexed, subarray and resized types on
// origin, target and result, on a managed and a native window; both match
// the element-index model of the types and each other.
TEST(AccumulateTest, DerivedDatatypesOnOriginTargetAndResult) {
  const int rank = Rank(), size = Size();
  const std::vector<DerivedCase> cases = DerivedCases();
  MPI_Aint bytes = 0;
  const std::vector<DerivedPlace> places = PlaceDerived(cases, size, &bytes);
  AllocWindow managed(bytes, 1);
  OptOutInfo opt_out;
  AllocWindow native(NativeSafeBytes(bytes), 1, opt_out.get());
  ASSERT_EQ(managed.rc(), MPI_SUCCESS);
  ASSERT_EQ(native.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(managed.win()));
  const auto got_managed =
      RunDerived(managed.win(), managed.base(), cases, places);
  const auto got_native =
      RunDerived(native.win(), native.base(), cases, places);

  for (size_t i = 0; i < cases.size(); ++i) {
    const DerivedCase& c = cases[i];
    const DerivedPlace& p = places[i];
    const TypeCase& t = *p.type;
    const int index = static_cast<int>(i);
    // Model: apply the element maps in rank order.
    std::vector<std::byte> model((1 + size) * p.block);
    for (int b = 0; b <= size; ++b) {
      const auto init =
          Values(t, c.op, p.target, index, kSharedInit, kBlockElems, b);
      std::memcpy(model.data() + b * p.block, init.data(), p.block);
    }
    std::vector<std::byte> my_result(p.block, std::byte{0xee});
    for (int o = 0; o < size; ++o) {
      Side origin = c.origin(t.type, t.extent),
           target = c.target(t.type, t.extent);
      const auto values = Values(t, c.op, o, index, kAccValue, kBlockElems);
      std::byte* dst = model.data() + (c.result ? (1 + o) * p.block : 0);
      if (c.result && o == rank) {
        Side result = c.result(t.type, t.extent);
        for (size_t j = 0; j < result.elems.size(); ++j) {
          std::memcpy(my_result.data() + result.elems[j] * t.extent,
                      dst + target.elems[j] * t.extent, t.extent);
        }
        Free(result);
      }
      for (size_t j = 0; j < target.elems.size(); ++j) {
        t.apply(c.op, dst + target.elems[j] * t.extent,
                values.data() + origin.elems[j] * t.extent);
      }
      Free(origin);
      Free(target);
    }
    const int elems = (1 + size) * kBlockElems;
    if (rank == p.target) {
      EXPECT_EQ(Diff(t, managed.base() + p.offset, model.data(), elems,
                     c.name + " shim window"),
                "");
      EXPECT_EQ(Diff(t, native.base() + p.offset, model.data(), elems,
                     c.name + " native window"),
                "");
    }
    if (c.result) {
      EXPECT_EQ(Diff(t, got_managed[i].data(), my_result.data(), kBlockElems,
                     c.name + " shim result"),
                "");
      EXPECT_EQ(Diff(t, got_native[i].data(), my_result.data(), kBlockElems,
                     c.name + " native result"),
                "");
    }
  }
}

}  // namespace
}  // namespace rmashim_test::accumulate
