// DART one-sided communication through datatypes and every kind of memory:
// strided and indexed types on team-allocated, dart_memalloc (heap) and
// registered user memory, and puts and gets by every unit to every unit's
// heap and registered memory (of different sizes per unit, too).
#include <dart/dart.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "tests/dart/dart_onesided_util.h"
#include "tests/dart/dart_test_util.h"

namespace dart_testing::onesided {
namespace {

// Strided types on the target side (a column of a row-major matrix) and on
// the origin side, node-local and remote.
TEST(DartTypes, StridedColumnToEveryUnit) {
  const size_t rows = 50, cols = 8;  // every unit owns a rows x cols matrix
  dart_gptr_t g;
  ASSERT_EQ(DART_OK, dart_team_memalloc_aligned(DART_TEAM_ALL, rows * cols,
                                                DART_TYPE_INT, &g));
  int32_t* mine = nullptr;
  dart_gptr_getaddr(At(g, MyId()), reinterpret_cast<void**>(&mine));
  std::fill(mine, mine + rows * cols, -1);
  dart_datatype_t column;
  ASSERT_EQ(DART_OK, dart_type_create_strided(DART_TYPE_INT, cols, 1, &column));
  dart_barrier(DART_TEAM_ALL);
  // Unit u writes column (u % cols) of every unit.
  std::vector<int32_t> values(rows);
  for (size_t r = 0; r < rows; ++r) values[r] = Pattern(MyId(), 0, r);
  for (int to = 0; to < Size(); ++to) {
    ASSERT_EQ(DART_OK,
              dart_put_blocking(At(g, to, 4 * (MyId() % cols)), values.data(),
                                rows, DART_TYPE_INT, column));
  }
  dart_barrier(DART_TEAM_ALL);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      const int32_t expected = static_cast<int>(c) < Size()
                                   ? Pattern(static_cast<int>(c), 0, r)
                                   : -1;
      ASSERT_EQ(expected, mine[r * cols + c]) << r << "," << c;
    }
  }
  // Gather column 0 of every unit back into a dense vector, and into every
  // other element of a strided local buffer.
  for (int from = 0; from < Size(); ++from) {
    std::vector<int32_t> got(rows, 0);
    ASSERT_EQ(DART_OK, dart_get_blocking(got.data(), At(g, from), rows, column,
                                         DART_TYPE_INT));
    for (size_t r = 0; r < rows; ++r) ASSERT_EQ(Pattern(0, 0, r), got[r]);
    dart_datatype_t every_other;
    ASSERT_EQ(DART_OK,
              dart_type_create_strided(DART_TYPE_INT, 2, 1, &every_other));
    std::vector<int32_t> spread(2 * rows, 7);
    dart_handle_t h;
    ASSERT_EQ(DART_OK, dart_get_handle(spread.data(), At(g, from), rows, column,
                                       every_other, &h));
    ASSERT_EQ(DART_OK, dart_wait(&h));
    for (size_t r = 0; r < rows; ++r) {
      ASSERT_EQ(Pattern(0, 0, r), spread[2 * r]);
      ASSERT_EQ(7, spread[2 * r + 1]);
    }
    ASSERT_EQ(DART_OK, dart_type_destroy(&every_other));
    EXPECT_EQ(DART_TYPE_UNDEFINED, every_other);
  }
  dart_barrier(DART_TEAM_ALL);
  ASSERT_EQ(DART_OK, dart_type_destroy(&column));
  ASSERT_EQ(DART_OK, dart_team_memfree(g));
}

TEST(DartTypes, IndexedToEveryUnit) {
  // Blocks {2 at 0, 3 at 5, 1 at 9}: 6 elements per instance, 10 wide.
  const size_t blocklen[] = {2, 3, 1};
  const size_t offset[] = {0, 5, 9};
  dart_datatype_t indexed;
  ASSERT_EQ(DART_OK, dart_type_create_indexed(DART_TYPE_LONG, 3, blocklen,
                                              offset, &indexed));
  const size_t instances = 4, width = 10;
  dart_gptr_t g;
  ASSERT_EQ(DART_OK,
            dart_team_memalloc_aligned(
                DART_TEAM_ALL, instances * width * Size(), DART_TYPE_LONG, &g));
  int64_t* mine = nullptr;
  dart_gptr_getaddr(At(g, MyId()), reinterpret_cast<void**>(&mine));
  std::fill(mine, mine + instances * width * Size(), -1);
  dart_barrier(DART_TEAM_ALL);
  std::vector<int64_t> values(6 * instances);
  std::iota(values.begin(), values.end(), 100 * MyId());
  for (int to = 0; to < Size(); ++to) {
    ASSERT_EQ(DART_OK,
              dart_put(At(g, to, 8 * instances * width * MyId()), values.data(),
                       values.size(), DART_TYPE_LONG, indexed));
  }
  ASSERT_EQ(DART_OK, dart_flush_all(g));
  dart_barrier(DART_TEAM_ALL);
  const int in_block[] = {1, 1, 0, 0, 0, 1, 1, 1, 0, 1};
  for (int from = 0; from < Size(); ++from) {
    int64_t next = 100 * from;
    for (size_t k = 0; k < instances * width; ++k) {
      const int64_t got = mine[from * instances * width + k];
      ASSERT_EQ(in_block[k % width] ? next++ : -1, got) << from << " " << k;
    }
  }
  dart_barrier(DART_TEAM_ALL);
  ASSERT_EQ(DART_OK, dart_type_destroy(&indexed));
  ASSERT_EQ(DART_OK, dart_team_memfree(g));
}

// dart_memalloc memory of every unit, put and got by every unit.
TEST(DartMemalloc, EveryUnitReachesEveryUnitsHeap) {
  const size_t n = 5000;
  dart_gptr_t mine;
  ASSERT_EQ(DART_OK, dart_memalloc(n * Size(), DART_TYPE_INT, &mine));
  const std::vector<dart_gptr_t> all = AllGptrs(mine);
  for (int to = 0; to < Size(); ++to) {
    const std::vector<int32_t> data = Block(MyId(), to, n);
    dart_gptr_t g = all[to];
    dart_gptr_incaddr(&g, 4 * n * MyId());
    ASSERT_EQ(DART_OK, dart_put_blocking(g, data.data(), n, DART_TYPE_INT,
                                         DART_TYPE_INT));
  }
  dart_barrier(DART_TEAM_ALL);
  int32_t* local = nullptr;
  ASSERT_EQ(DART_OK, dart_gptr_getaddr(mine, reinterpret_cast<void**>(&local)));
  for (int from = 0; from < Size(); ++from) {
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(Pattern(from, MyId(), i), local[from * n + i]);
    }
  }
  for (int from = 0; from < Size(); ++from) {
    std::vector<int32_t> got(n);
    dart_gptr_t g = all[from];
    dart_gptr_incaddr(&g, 4 * n * MyId());
    ASSERT_EQ(DART_OK, dart_get_blocking(got.data(), g, n, DART_TYPE_INT,
                                         DART_TYPE_INT));
    EXPECT_EQ(Block(MyId(), from, n), got);
  }
  dart_barrier(DART_TEAM_ALL);
  ASSERT_EQ(DART_OK, dart_memfree(mine));
}

// Strided and indexed types on the other two kinds of memory: the
// non-collective heap and registered user memory (cross-memory attach on one
// node). Unit u puts column u % cols of every unit's rows x cols matrix with
// a strided target type, then reads row 1 back through an indexed one.
void StridedAndIndexedOn(const std::vector<dart_gptr_t>& all, int32_t* mine) {
  const size_t rows = 40, cols = 6;
  // One writer per column: more units would race on a column.
  ASSERT_LE(static_cast<size_t>(Size()), cols);
  dart_datatype_t column, row_pairs;
  ASSERT_EQ(DART_OK, dart_type_create_strided(DART_TYPE_INT, cols, 1, &column));
  const size_t blocklen[] = {2, 3}, offset[] = {0, 3};  // row 1: 0,1,3,4,5
  ASSERT_EQ(DART_OK, dart_type_create_indexed(DART_TYPE_INT, 2, blocklen,
                                              offset, &row_pairs));
  std::vector<int32_t> values(rows);
  for (size_t r = 0; r < rows; ++r) values[r] = Pattern(MyId(), 1, r);
  for (int to = 0; to < Size(); ++to) {
    ASSERT_EQ(DART_OK,
              dart_put_blocking(At(all[to], to, 4 * (MyId() % cols)),
                                values.data(), rows, DART_TYPE_INT, column));
  }
  dart_barrier(DART_TEAM_ALL);
  // Column c is written by unit c, if there is one.
  auto expected = [&](size_t r, size_t c) {
    int writer = -1;
    for (int u = 0; u < Size(); ++u) {
      if (static_cast<size_t>(u) % cols == c) writer = u;
    }
    return writer < 0 ? -1 : Pattern(writer, 1, r);
  };
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      ASSERT_EQ(expected(r, c), mine[r * cols + c]) << r << "," << c;
    }
  }
  for (int from = 0; from < Size(); ++from) {
    std::vector<int32_t> got(5, 0);
    ASSERT_EQ(DART_OK,
              dart_get_blocking(got.data(), At(all[from], from, 4 * cols), 5,
                                row_pairs, DART_TYPE_INT));
    const size_t picked[] = {0, 1, 3, 4, 5};
    for (int i = 0; i < 5; ++i) {
      ASSERT_EQ(expected(1, picked[i]), got[i]) << "from " << from;
    }
  }
  dart_barrier(DART_TEAM_ALL);
  ASSERT_EQ(DART_OK, dart_type_destroy(&column));
  ASSERT_EQ(DART_OK, dart_type_destroy(&row_pairs));
}

TEST(DartTypes, StridedAndIndexedOnHeapMemory) {
  const size_t n = 40 * 6;
  dart_gptr_t g;
  ASSERT_EQ(DART_OK, dart_memalloc(n, DART_TYPE_INT, &g));
  int32_t* mine = nullptr;
  ASSERT_EQ(DART_OK, dart_gptr_getaddr(g, reinterpret_cast<void**>(&mine)));
  std::fill(mine, mine + n, -1);
  const std::vector<dart_gptr_t> all = AllGptrs(g);
  StridedAndIndexedOn(all, mine);
  ASSERT_EQ(DART_OK, dart_memfree(g));
}

TEST(DartTypes, StridedAndIndexedOnRegisteredMemory) {
  std::vector<int32_t> memory(40 * 6, -1);
  dart_gptr_t g;
  ASSERT_EQ(DART_OK,
            dart_team_memregister_aligned(DART_TEAM_ALL, memory.size(),
                                          DART_TYPE_INT, memory.data(), &g));
  StridedAndIndexedOn(std::vector<dart_gptr_t>(Size(), g), memory.data());
  ASSERT_EQ(DART_OK, dart_team_memderegister(g));
}

// Registered user memory: every unit puts into every unit's vector.
TEST(DartRegister, PutsLandInUserMemory) {
  const size_t n = 64;
  std::vector<int32_t> memory(n * Size(), 0);
  dart_gptr_t g;
  ASSERT_EQ(DART_OK,
            dart_team_memregister_aligned(DART_TEAM_ALL, memory.size(),
                                          DART_TYPE_INT, memory.data(), &g));
  EXPECT_LT(g.segid, 0);
  for (int to = 0; to < Size(); ++to) {
    const std::vector<int32_t> data = Block(MyId(), to, n);
    ASSERT_EQ(DART_OK, dart_put_blocking(At(g, to, 4 * n * MyId()), data.data(),
                                         n, DART_TYPE_INT, DART_TYPE_INT));
  }
  dart_barrier(DART_TEAM_ALL);
  for (int from = 0; from < Size(); ++from) {
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(Pattern(from, MyId(), i), memory[from * n + i]);
    }
  }
  for (int from = 0; from < Size(); ++from) {
    std::vector<int32_t> got(n);
    ASSERT_EQ(DART_OK,
              dart_get_blocking(got.data(), At(g, from, 4 * n * MyId()), n,
                                DART_TYPE_INT, DART_TYPE_INT));
    EXPECT_EQ(Block(MyId(), from, n), got);
  }
  dart_barrier(DART_TEAM_ALL);
  ASSERT_EQ(DART_OK, dart_team_memderegister(g));
  EXPECT_EQ(Pattern(0, MyId(), 0), memory[0]);  // still the caller's
}

// Unaligned registration: unit u registers u + 1 elements.
TEST(DartRegister, DifferentSizesPerUnit) {
  std::vector<int64_t> memory(MyId() + 1, -1);
  dart_gptr_t g;
  ASSERT_EQ(DART_OK, dart_team_memregister(DART_TEAM_ALL, memory.size(),
                                           DART_TYPE_LONG, memory.data(), &g));
  dart_barrier(DART_TEAM_ALL);
  // Unit u writes its id into the last element of unit (u + 1) % n.
  const int to = (MyId() + 1) % Size();
  const int64_t value = MyId();
  ASSERT_EQ(DART_OK, dart_put_blocking(At(g, to, 8 * to), &value, 1,
                                       DART_TYPE_LONG, DART_TYPE_LONG));
  // One past the target's end is rejected.
  EXPECT_EQ(DART_ERR_INVAL,
            dart_put_blocking(At(g, to, 8 * (to + 1)), &value, 1,
                              DART_TYPE_LONG, DART_TYPE_LONG));
  dart_barrier(DART_TEAM_ALL);
  EXPECT_EQ((MyId() + Size() - 1) % Size(), memory.back());
  ASSERT_EQ(DART_OK, dart_team_memderegister(g));
}

}  // namespace
}  // namespace dart_testing::onesided
