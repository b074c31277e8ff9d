// DART one-sided communication in every completion form: every unit puts
// to every unit through team-allocated memory blocking, flushed, with
// handles waited for, tested, completed locally or freed, at sizes from one
// byte to 1 MiB, and gets from every unit in every form; data is checked
// everywhere.
#include <dart/dart.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/dart/dart_onesided_util.h"
#include "tests/dart/dart_test_util.h"

namespace dart_testing::onesided {
namespace {

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
      ASSERT_EQ(DART_OK, dart_testall_local(handles.data() + 1,
                                            handles.size() - 1, &done));
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
// Origin blocks overwritten after dart_flush_local_all: a put still sending
// from them would deliver the overwritten data.
TEST_F(DartPut, LargeBlocksLocallyCompleted) {
  PutToAll(*segment_, Form::kFlushLocalAll, kMaxPerUnit);
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

}  // namespace
}  // namespace dart_testing::onesided
