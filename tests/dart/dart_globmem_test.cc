// DART global pointers and memory: the 128-bit gptr and its arithmetic,
// dart_memalloc growing far beyond any fixed pool (and reused after free),
// symmetric team allocations, zero-size allocations, flags.
#include <dart/dart.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/dart/dart_test_util.h"

namespace {

using dart_testing::AllGptrs;
using dart_testing::At;
using dart_testing::MyId;
using dart_testing::Size;

TEST(DartGptr, LayoutAndNull) {
  EXPECT_EQ(16u, sizeof(dart_gptr_t));
  dart_gptr_t g = DART_GPTR_NULL;
  EXPECT_TRUE(DART_GPTR_ISNULL(g));
  EXPECT_EQ(-1, g.unitid);
  EXPECT_EQ(DART_TEAM_NULL, g.teamid);
  dart_gptr_t h = DART_GPTR_NULL;
  EXPECT_TRUE(DART_GPTR_EQUAL(g, h));
  ASSERT_EQ(DART_OK, dart_gptr_incaddr(&h, 8));
  EXPECT_FALSE(DART_GPTR_EQUAL(g, h));
  EXPECT_FALSE(DART_GPTR_ISNULL(h));
  // The unit id field holds 24 bits.
  ASSERT_EQ(DART_OK, dart_gptr_setunit(&h, DART_TEAM_UNIT_ID((1 << 23) - 1)));
  EXPECT_EQ((1 << 23) - 1, h.unitid);
  EXPECT_EQ(DART_ERR_INVAL, dart_gptr_setunit(&h, DART_TEAM_UNIT_ID(1 << 23)));
  EXPECT_EQ(DART_ERR_INVAL, dart_gptr_setunit(&h, DART_TEAM_UNIT_ID(-2)));
}

TEST(DartGptr, ArithmeticAndLocalAddresses) {
  const size_t n = 100;
  dart_gptr_t g;
  ASSERT_EQ(DART_OK,
            dart_team_memalloc_aligned(DART_TEAM_ALL, n, DART_TYPE_DOUBLE, &g));
  EXPECT_EQ(0, g.unitid);
  EXPECT_EQ(0u, g.addr_or_offs.offset);
  EXPECT_GT(g.segid, 0);
  EXPECT_EQ(DART_TEAM_ALL, g.teamid);
  // Every unit got the same gptr (symmetric, aligned).
  for (const dart_gptr_t& other : AllGptrs(g))
    EXPECT_TRUE(DART_GPTR_EQUAL(g, other));
  double* base = nullptr;
  const dart_gptr_t mine = At(g, MyId());
  ASSERT_EQ(DART_OK, dart_gptr_getaddr(mine, reinterpret_cast<void**>(&base)));
  ASSERT_NE(nullptr, base);
  for (size_t i = 0; i < n; ++i) base[i] = MyId() + i / 1000.0;
  // incaddr moves by bytes; getaddr/setaddr round-trip.
  dart_gptr_t p = mine;
  ASSERT_EQ(DART_OK, dart_gptr_incaddr(&p, 8 * 42));
  void* addr = nullptr;
  ASSERT_EQ(DART_OK, dart_gptr_getaddr(p, &addr));
  EXPECT_EQ(base + 42, addr);
  ASSERT_EQ(DART_OK, dart_gptr_incaddr(&p, -8 * 40));
  ASSERT_EQ(DART_OK, dart_gptr_getaddr(p, &addr));
  EXPECT_EQ(base + 2, addr);
  dart_gptr_t q = mine;
  ASSERT_EQ(DART_OK, dart_gptr_setaddr(&q, base + 17));
  EXPECT_EQ(8u * 17, q.addr_or_offs.offset);
  EXPECT_EQ(DART_ERR_INVAL, dart_gptr_setaddr(&q, base + n + 1));
  // Another unit's pointer has no local address here.
  if (Size() > 1) {
    ASSERT_EQ(DART_OK, dart_gptr_getaddr(At(g, (MyId() + 1) % Size()), &addr));
    EXPECT_EQ(nullptr, addr);
  }
  dart_barrier(DART_TEAM_ALL);
  // Element 17 of every unit through the locally computed gptr.
  for (int u = 0; u < Size(); ++u) {
    double v = -1;
    ASSERT_EQ(DART_OK, dart_get_blocking(&v, At(g, u, 8 * 17), 1,
                                         DART_TYPE_DOUBLE, DART_TYPE_DOUBLE));
    EXPECT_DOUBLE_EQ(u + 17 / 1000.0, v);
  }
  dart_barrier(DART_TEAM_ALL);
  ASSERT_EQ(DART_OK, dart_team_memfree(g));
  // Freed: the gptr no longer resolves.
  double v;
  EXPECT_EQ(DART_ERR_NOTFOUND,
            dart_get_blocking(&v, g, 1, DART_TYPE_DOUBLE, DART_TYPE_DOUBLE));
}

TEST(DartGptr, Flags) {
  dart_gptr_t g;
  ASSERT_EQ(DART_OK,
            dart_team_memalloc_aligned(DART_TEAM_ALL, 4, DART_TYPE_INT, &g));
  uint16_t flags = 1;
  ASSERT_EQ(DART_OK, dart_gptr_getflags(g, &flags));
  EXPECT_EQ(0, flags);
  ASSERT_EQ(DART_OK, dart_gptr_setflags(&g, 0x1a5));
  EXPECT_EQ(0xa5u, g.flags);
  dart_gptr_t other = g;  // flags live with the segment
  other.flags = 0;
  ASSERT_EQ(DART_OK, dart_gptr_getflags(other, &flags));
  EXPECT_EQ(0x1a5, flags);
  dart_barrier(DART_TEAM_ALL);
  ASSERT_EQ(DART_OK, dart_team_memfree(g));
}

// dart_memalloc grows to far more than DART-MPI's 16 MB pool: small and
// large blocks, each filled with a pattern and read by every other unit.
TEST(DartMemalloc, GrowsBeyondAnyFixedPool) {
  std::vector<dart_gptr_t> blocks;
  std::vector<size_t> sizes;
  for (int i = 0; i < 200; ++i) sizes.push_back(1000 + 37 * i);  // ~1 MB
  sizes.push_back(48u << 20);                                    // 48 MiB
  sizes.push_back(3u << 20);
  sizes.push_back(0);
  sizes.push_back(20u << 20);
  size_t total = 0;
  for (size_t bytes : sizes) {
    dart_gptr_t g;
    ASSERT_EQ(DART_OK, dart_memalloc(bytes, DART_TYPE_BYTE, &g));
    EXPECT_EQ(MyId(), g.unitid);
    EXPECT_EQ(DART_SEGMENT_LOCAL, g.segid);
    EXPECT_EQ(DART_TEAM_ALL, g.teamid);
    uint8_t* p = nullptr;
    ASSERT_EQ(DART_OK, dart_gptr_getaddr(g, reinterpret_cast<void**>(&p)));
    ASSERT_NE(nullptr, p);
    for (size_t i = 0; i < bytes; i += 997)
      p[i] = static_cast<uint8_t>(i + blocks.size());
    if (bytes > 0) p[bytes - 1] = 0xee;
    blocks.push_back(g);
    total += bytes;
  }
  EXPECT_GT(total, size_t{64} << 20);
  // Distinct blocks do not overlap.
  for (size_t i = 1; i < blocks.size(); ++i) {
    EXPECT_NE(blocks[i].addr_or_offs.offset, blocks[i - 1].addr_or_offs.offset);
  }
  dart_barrier(DART_TEAM_ALL);
  // The next unit reads some bytes of each of this unit's blocks.
  const int from = (MyId() + 1) % Size();
  std::vector<dart_gptr_t> all(blocks.size() * Size());
  ASSERT_EQ(DART_OK, dart_allgather(blocks.data(), all.data(),
                                    blocks.size() * sizeof(dart_gptr_t),
                                    DART_TYPE_BYTE, DART_TEAM_ALL));
  const dart_gptr_t* theirs = &all[from * blocks.size()];
  for (size_t b = 0; b < blocks.size(); ++b) {
    const size_t bytes = sizes[b];
    if (bytes == 0) continue;
    for (size_t i : {size_t{0}, bytes / 2 / 997 * 997}) {
      uint8_t v = 0;
      dart_gptr_t g = theirs[b];
      dart_gptr_incaddr(&g, static_cast<int64_t>(i));
      ASSERT_EQ(DART_OK,
                dart_get_blocking(&v, g, 1, DART_TYPE_BYTE, DART_TYPE_BYTE));
      EXPECT_EQ(static_cast<uint8_t>(i + b), v) << "block " << b << " at " << i;
    }
    uint8_t last = 0;
    dart_gptr_t g = theirs[b];
    dart_gptr_incaddr(&g, static_cast<int64_t>(bytes - 1));
    ASSERT_EQ(DART_OK,
              dart_get_blocking(&last, g, 1, DART_TYPE_BYTE, DART_TYPE_BYTE));
    EXPECT_EQ(0xee, last);
  }
  dart_barrier(DART_TEAM_ALL);
  // Free everything; the space is reused.
  const uint64_t first_offset = blocks[0].addr_or_offs.offset;
  for (const dart_gptr_t& g : blocks) ASSERT_EQ(DART_OK, dart_memfree(g));
  EXPECT_EQ(DART_ERR_INVAL, dart_memfree(blocks[0]));  // double free
  dart_gptr_t again;
  ASSERT_EQ(DART_OK, dart_memalloc(1000, DART_TYPE_BYTE, &again));
  EXPECT_EQ(first_offset, again.addr_or_offs.offset);
  ASSERT_EQ(DART_OK, dart_memfree(again));
}

TEST(DartMemalloc, OnlyTheOwnerFrees) {
  dart_gptr_t g;
  ASSERT_EQ(DART_OK, dart_memalloc(16, DART_TYPE_INT, &g));
  const std::vector<dart_gptr_t> all = AllGptrs(g);
  if (Size() > 1) {
    EXPECT_EQ(DART_ERR_INVAL, dart_memfree(all[(MyId() + 1) % Size()]));
  }
  dart_barrier(DART_TEAM_ALL);
  ASSERT_EQ(DART_OK, dart_memfree(g));
  // Past the end of an existing chunk, or of a chunk not created: rejected.
  int v = 0;
  dart_gptr_t far = g;
  far.addr_or_offs.offset = uint64_t{1} << 60;
  EXPECT_EQ(DART_ERR_INVAL,
            dart_put_blocking(far, &v, 1, DART_TYPE_INT, DART_TYPE_INT));
  far.addr_or_offs.offset = (uint64_t{1} << 20) - 2;  // straddles chunks 0/1
  EXPECT_EQ(DART_ERR_INVAL,
            dart_put_blocking(far, &v, 1, DART_TYPE_INT, DART_TYPE_INT));
}

TEST(DartTeamMemalloc, ZeroSize) {
  dart_gptr_t g;
  ASSERT_EQ(DART_OK,
            dart_team_memalloc_aligned(DART_TEAM_ALL, 0, DART_TYPE_INT, &g));
  EXPECT_FALSE(DART_GPTR_ISNULL(g));
  int v = 1;
  // Zero elements are fine, one is out of range.
  EXPECT_EQ(DART_OK, dart_put_blocking(At(g, Size() - 1), &v, 0, DART_TYPE_INT,
                                       DART_TYPE_INT));
  EXPECT_EQ(DART_ERR_INVAL, dart_put_blocking(At(g, Size() - 1), &v, 1,
                                              DART_TYPE_INT, DART_TYPE_INT));
  ASSERT_EQ(DART_OK, dart_team_memfree(g));
  EXPECT_EQ(DART_OK, dart_team_memfree(DART_GPTR_NULL));
}

// Many live team allocations at once, each with its own segment id.
TEST(DartTeamMemalloc, ManySegments) {
  std::vector<dart_gptr_t> segs(4);
  for (size_t i = 0; i < segs.size(); ++i) {
    ASSERT_EQ(DART_OK, dart_team_memalloc_aligned(DART_TEAM_ALL, i + 1,
                                                  DART_TYPE_LONG, &segs[i]));
  }
  for (size_t i = 0; i < segs.size(); ++i) {
    const long value = 100 * MyId() + static_cast<long>(i);
    const int to = (MyId() + 1) % Size();
    ASSERT_EQ(DART_OK, dart_put_blocking(At(segs[i], to, 8 * i), &value, 1,
                                         DART_TYPE_LONG, DART_TYPE_LONG));
  }
  dart_barrier(DART_TEAM_ALL);
  const int from = (MyId() + Size() - 1) % Size();
  for (size_t i = 0; i < segs.size(); ++i) {
    long* p = nullptr;
    ASSERT_EQ(DART_OK, dart_gptr_getaddr(At(segs[i], MyId()),
                                         reinterpret_cast<void**>(&p)));
    EXPECT_EQ(100 * from + static_cast<long>(i), p[i]);
  }
  dart_barrier(DART_TEAM_ALL);
  for (size_t i = 0; i < segs.size(); i += 2) {
    ASSERT_EQ(DART_OK, dart_team_memfree(segs[i]));
  }
  // Freed ids are reused.
  dart_gptr_t g;
  ASSERT_EQ(DART_OK,
            dart_team_memalloc_aligned(DART_TEAM_ALL, 1, DART_TYPE_LONG, &g));
  EXPECT_EQ(segs[0].segid, g.segid);
  ASSERT_EQ(DART_OK, dart_team_memfree(g));
  for (size_t i = 1; i < segs.size(); i += 2) {
    ASSERT_EQ(DART_OK, dart_team_memfree(segs[i]));
  }
}

}  // namespace
