// DART one-sided communication: every unit puts to and gets from every unit
// through team-allocated and dart_memalloc memory, in every completion form,
// with basic, strided and indexed types; data is checked everywhere.
#include <dart/dart.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "tests/dart_test_util.h"

namespace {

using dart_testing::AllGptrs;
using dart_testing::At;
using dart_testing::MyId;
using dart_testing::Size;

// The value unit `from` writes to element `i` of unit `to`'s block.
int32_t Pattern(int from, int to, size_t i) {
  return static_cast<int32_t>(from * 1000003 + to * 7919 + i);
}

// A team-allocated segment with one block of `per_unit` ints per origin on
// every unit.
class Segment {
 public:
  explicit Segment(size_t per_unit) : per_unit_(per_unit) {
    EXPECT_EQ(DART_OK,
              dart_team_memalloc_aligned(DART_TEAM_ALL, per_unit * Size(),
                                         DART_TYPE_INT, &gptr_));
  }
  ~Segment() { EXPECT_EQ(DART_OK, dart_team_memfree(gptr_)); }
  // Where origin `from` writes in unit `to`'s part.
  dart_gptr_t Block(int to, int from) const {
    return At(gptr_, to, int64_t{4} * per_unit_ * from);
  }
  int32_t* Local() const {
    void* addr = nullptr;
    EXPECT_EQ(DART_OK, dart_gptr_getaddr(At(gptr_, MyId()), &addr));
    return static_cast<int32_t*>(addr);
  }
  dart_gptr_t gptr() const { return gptr_; }
  size_t per_unit() const { return per_unit_; }

 private:
  size_t per_unit_;
  dart_gptr_t gptr_;
};

// One segment for all DartPut tests (window creation is collective and
// slow on an oversubscribed machine); each test clears it first.
class DartPut : public testing::Test {
 protected:
  static constexpr size_t kMaxPerUnit = 256 << 10;
  static void SetUpTestSuite() { segment_ = new Segment(kMaxPerUnit); }
  static void TearDownTestSuite() {
    delete segment_;
    segment_ = nullptr;
  }
  void SetUp() override {
    std::memset(segment_->Local(), 0, 4 * kMaxPerUnit * Size());
    dart_barrier(DART_TEAM_ALL);
  }
  static Segment* segment_;
};
Segment* DartPut::segment_ = nullptr;

std::vector<int32_t> Block(int from, int to, size_t n) {
  std::vector<int32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = Pattern(from, to, i);
  return v;
}

// Every unit checks the blocks all origins wrote into its part.
void ExpectReceived(const Segment& s, size_t n) {
  const int32_t* local = s.Local();
  const size_t stride = s.per_unit();
  for (int from = 0; from < Size(); ++from) {
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(Pattern(from, MyId(), i), local[from * stride + i])
          << "from " << from << " element " << i;
    }
    // Nothing written past the block.
    if (n < stride) {
      ASSERT_EQ(0, local[from * stride + n]);
    }
  }
}

enum class Form {
  kBlocking,
  kFlush,
  kFlushAll,
  kHandle,
  kTest,
  kTestEach,
  // Local completion only, then the source is overwritten: the target must
  // still receive what was there at the put.
  kHandleLocal,
  kTestLocal,
  kFlushLocalAll,
  // Handles freed while in flight: the puts complete at the next flush.
  kFreedHandle,
};

void PutToAll(const Segment& s, Form form, size_t n) {
  std::vector<std::vector<int32_t>> data;
  std::vector<dart_handle_t> handles;
  for (int to = 0; to < Size(); ++to) {
    data.push_back(Block(MyId(), to, n));
    const dart_gptr_t g = s.Block(to, MyId());
    switch (form) {
      case Form::kBlocking:
        ASSERT_EQ(DART_OK, dart_put_blocking(g, data.back().data(), n,
                                             DART_TYPE_INT, DART_TYPE_INT));
        break;
      case Form::kFlush:
        ASSERT_EQ(DART_OK, dart_put(g, data.back().data(), n, DART_TYPE_INT,
                                    DART_TYPE_INT));
        ASSERT_EQ(DART_OK, dart_flush(g));
        break;
      case Form::kFlushAll:
      case Form::kFlushLocalAll:
        ASSERT_EQ(DART_OK, dart_put(g, data.back().data(), n, DART_TYPE_INT,
                                    DART_TYPE_INT));
        break;
      case Form::kHandle:
      case Form::kTest:
      case Form::kTestEach:
      case Form::kHandleLocal:
      case Form::kTestLocal:
      case Form::kFreedHandle:
        handles.push_back(DART_HANDLE_NULL);
        ASSERT_EQ(DART_OK,
                  dart_put_handle(g, data.back().data(), n, DART_TYPE_INT,
                                  DART_TYPE_INT, &handles.back()));
        break;
    }
  }
  if (form == Form::kFlushAll) {
    ASSERT_EQ(DART_OK, dart_flush_all(s.gptr()));
  }
  if (form == Form::kHandle) {
    ASSERT_EQ(DART_OK, dart_waitall(handles.data(), handles.size()));
  }
  if (form == Form::kTest) {
    int32_t done = 0;
    while (!done) {
      ASSERT_EQ(DART_OK, dart_testall(handles.data(), handles.size(), &done));
    }
  }
  if (form == Form::kTestEach) {
    for (dart_handle_t& h : handles) {
      int32_t done = 0;
      while (!done) ASSERT_EQ(DART_OK, dart_test(&h, &done));
    }
  }
  if (form == Form::kHandleLocal) {
    ASSERT_EQ(DART_OK, dart_waitall_local(handles.data(), handles.size()));
  }
  if (form == Form::kTestLocal) {
    // The first handle alone, then the rest together.
    int32_t done = 0;
    while (!done) ASSERT_EQ(DART_OK, dart_test_local(&handles[0], &done));
    done = 0;
    while (!done) {
      ASSERT_EQ(DART_OK,
                dart_testall_local(handles.data() + 1, handles.size() - 1, &done));
    }
  }
  if (form == Form::kFlushLocalAll) {
    ASSERT_EQ(DART_OK, dart_flush_local_all(s.gptr()));
  }
  if (form == Form::kFreedHandle) {
    for (dart_handle_t& h : handles) ASSERT_EQ(DART_OK, dart_handle_free(&h));
    ASSERT_EQ(DART_OK, dart_flush_all(s.gptr()));
  }
  if (form == Form::kHandleLocal || form == Form::kTestLocal ||
      form == Form::kFlushLocalAll) {
    for (auto& block : data) std::fill(block.begin(), block.end(), -1);
    ASSERT_EQ(DART_OK, dart_flush_all(s.gptr()));
  }
  for (dart_handle_t h : handles) EXPECT_EQ(DART_HANDLE_NULL, h);
  dart_barrier(DART_TEAM_ALL);
  ExpectReceived(s, n);
  dart_barrier(DART_TEAM_ALL);
}

TEST_F(DartPut, BlockingToEveryUnit) {
  PutToAll(*segment_, Form::kBlocking, 17);
}
TEST_F(DartPut, FlushToEveryUnit) { PutToAll(*segment_, Form::kFlush, 1000); }
TEST_F(DartPut, FlushAllToEveryUnit) {
  PutToAll(*segment_, Form::kFlushAll, 1);
}
TEST_F(DartPut, HandlesToEveryUnit) {
  PutToAll(*segment_, Form::kHandle, 4096);
}
TEST_F(DartPut, TestedHandlesToEveryUnit) {
  PutToAll(*segment_, Form::kTest, 3);
}
TEST_F(DartPut, EachHandleTestedToEveryUnit) {
  PutToAll(*segment_, Form::kTestEach, 5);
}
TEST_F(DartPut, LocallyCompletedHandlesToEveryUnit) {
  PutToAll(*segment_, Form::kHandleLocal, 2048);
}
TEST_F(DartPut, LocallyTestedHandlesToEveryUnit) {
  PutToAll(*segment_, Form::kTestLocal, 64);
}
TEST_F(DartPut, FlushLocalAllToEveryUnit) {
  PutToAll(*segment_, Form::kFlushLocalAll, 500);
}
TEST_F(DartPut, FreedHandlesCompleteAtFlush) {
  PutToAll(*segment_, Form::kFreedHandle, 300);
}
TEST_F(DartPut, LargeBlocksToEveryUnit) {
  PutToAll(*segment_, Form::kFlushAll, kMaxPerUnit);
}

// Each unit fills its own part; everyone gets every part in every form.
TEST(DartGet, EveryFormFromEveryUnit) {
  const size_t n = 333;
  Segment s(n);
  int32_t* local = s.Local();
  for (size_t i = 0; i < n; ++i) local[i] = Pattern(MyId(), 0, i);
  dart_barrier(DART_TEAM_ALL);
  for (int from = 0; from < Size(); ++from) {
    const dart_gptr_t g = At(s.gptr(), from);
    const std::vector<int32_t> expected = Block(from, 0, n);
    std::vector<int32_t> a(n), b(n), c(n), d(n);
    ASSERT_EQ(DART_OK,
              dart_get_blocking(a.data(), g, n, DART_TYPE_INT, DART_TYPE_INT));
    ASSERT_EQ(DART_OK, dart_get(b.data(), g, n, DART_TYPE_INT, DART_TYPE_INT));
    ASSERT_EQ(DART_OK, dart_flush_local(g));
    dart_handle_t h = DART_HANDLE_NULL, h2 = DART_HANDLE_NULL;
    ASSERT_EQ(DART_OK, dart_get_handle(c.data(), g, n, DART_TYPE_INT,
                                       DART_TYPE_INT, &h));
    ASSERT_EQ(DART_OK, dart_wait_local(&h));
    ASSERT_EQ(DART_OK, dart_get_handle(d.data(), g, n, DART_TYPE_INT,
                                       DART_TYPE_INT, &h2));
    ASSERT_EQ(DART_OK, dart_wait(&h2));
    EXPECT_EQ(expected, a);
    EXPECT_EQ(expected, b);
    EXPECT_EQ(expected, c);
    EXPECT_EQ(expected, d);
  }
  dart_barrier(DART_TEAM_ALL);
}

// Sizes from 1 byte to 1 MiB, to every unit, read back by the target.
TEST_F(DartPut, ByteSizes) {
  const size_t kMax = 4 * kMaxPerUnit;  // bytes per origin
  const dart_gptr_t g = segment_->gptr();
  for (size_t bytes = 1; bytes <= kMax; bytes *= 8) {
    std::vector<uint8_t> out(bytes);
    for (size_t i = 0; i < bytes; ++i) {
      out[i] = static_cast<uint8_t>(i * 31 + MyId() + bytes);
    }
    for (int to = 0; to < Size(); ++to) {
      ASSERT_EQ(DART_OK, dart_put(At(g, to, kMax * MyId()), out.data(), bytes,
                                  DART_TYPE_BYTE, DART_TYPE_BYTE));
    }
    ASSERT_EQ(DART_OK, dart_flush_all(g));
    dart_barrier(DART_TEAM_ALL);
    const auto* mine = reinterpret_cast<const uint8_t*>(segment_->Local());
    for (int from = 0; from < Size(); ++from) {
      const uint8_t* p = mine + kMax * from;
      for (size_t i = 0; i < bytes; ++i) {
        ASSERT_EQ(static_cast<uint8_t>(i * 31 + from + bytes), p[i]);
      }
    }
    dart_barrier(DART_TEAM_ALL);
  }
}

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
    ASSERT_EQ(DART_OK, dart_get_blocking(got.data(), At(all[from], from, 4 * cols),
                                         5, row_pairs, DART_TYPE_INT));
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
