// The segment cache's own rules, without MPI: exact-size reuse of own
// segments, most recently freed first; both parts kept within their bounds
// by letting the least recently freed go; an own segment that leaves is
// marked dropped, and peers' mappings of dropped segments go first; Flush
// empties both parts.
#include "shim/windows/segment_cache.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace rmashim {
namespace {

constexpr size_t kPage = 4096;

// A shared memory file and two mappings of it: one as its owner has it, one
// as a node peer would.
struct SharedFile {
  explicit SharedFile(size_t bytes) : bytes(bytes) {
    fd = memfd_create("segment_cache_test", MFD_CLOEXEC);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(bytes)), 0);
    owner = Map();
    peer = Map();
  }
  std::byte* Map() const {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    EXPECT_NE(p, MAP_FAILED);
    return static_cast<std::byte*>(p);
  }
  OwnSegment Own(long serial) const {
    return {fd, owner, bytes, 1, serial, serial};
  }
  PeerSegment Peer(long serial) const {
    return {42, 1, serial, serial, bytes, peer};
  }
  // Whether `addr` is still mapped in this process.
  static bool Mapped(std::byte* addr) {
    unsigned char vec;
    return mincore(addr, kPage, &vec) == 0;
  }
  size_t bytes;
  int fd = -1;
  std::byte* owner = nullptr;
  std::byte* peer = nullptr;
};

SegmentCache::Limits Roomy() {
  SegmentCache::Limits l;
  l.own_bytes = l.peer_bytes = 64 * kPage;
  l.own_entries = l.peer_entries = 8;
  l.held_fds = 4;
  return l;
}

TEST(SegmentCacheTest, GivesBackOwnSegmentsOfTheSameSizeNewestFirst) {
  SegmentCache cache(Roomy());
  SharedFile a(2 * kPage), b(2 * kPage), c(3 * kPage);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cache.HoldDescriptor(kPage));
  cache.PutOwn(a.Own(1));
  cache.PutOwn(b.Own(2));
  cache.PutOwn(c.Own(3));
  EXPECT_EQ(cache.cached_bytes(), 7 * kPage);
  OwnSegment got;
  EXPECT_FALSE(cache.TakeOwn(kPage, &got));
  ASSERT_TRUE(cache.TakeOwn(2 * kPage, &got));
  EXPECT_EQ(got.serial, 2);
  ASSERT_TRUE(cache.TakeOwn(2 * kPage, &got));
  EXPECT_EQ(got.serial, 1);
  EXPECT_EQ(got.addr, a.owner);
  EXPECT_EQ(got.fd, a.fd);
  EXPECT_FALSE(cache.TakeOwn(2 * kPage, &got));
  ASSERT_TRUE(cache.TakeOwn(3 * kPage, &got));
  EXPECT_EQ(cache.cached_bytes(), 0u);
}

TEST(SegmentCacheTest, HoldsFewDescriptorsAndNothingOverBudget) {
  SegmentCache cache(Roomy());
  EXPECT_FALSE(cache.HoldDescriptor(65 * kPage));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(cache.HoldDescriptor(kPage));
  EXPECT_FALSE(cache.HoldDescriptor(kPage));
  cache.ReleaseDescriptor();
  EXPECT_TRUE(cache.HoldDescriptor(kPage));
}

TEST(SegmentCacheTest, DropsLeastRecentlyFreedOwnSegmentsAndMarksThem) {
  SegmentCache::Limits limits = Roomy();
  limits.own_bytes = 4 * kPage;
  SegmentCache cache(limits);
  SharedFile a(2 * kPage), b(2 * kPage), c(2 * kPage);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cache.HoldDescriptor(kPage));
  cache.PutOwn(a.Own(1));
  cache.PutOwn(b.Own(2));
  EXPECT_EQ(cache.cached_bytes(), 4 * kPage);
  cache.PutOwn(c.Own(3));  // over budget: a goes
  EXPECT_EQ(cache.cached_bytes(), 4 * kPage);
  EXPECT_FALSE(SharedFile::Mapped(a.owner));
  EXPECT_EQ(std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(a.peer)),
            SegmentCache::kDroppedMark);
  EXPECT_TRUE(SharedFile::Mapped(b.owner));
  OwnSegment got;
  ASSERT_TRUE(cache.TakeOwn(2 * kPage, &got));
  EXPECT_EQ(got.serial, 3);
  ASSERT_TRUE(cache.TakeOwn(2 * kPage, &got));
  EXPECT_EQ(got.serial, 2);
  EXPECT_FALSE(cache.TakeOwn(2 * kPage, &got));
}

TEST(SegmentCacheTest, FindsPeerMappingsByTheirOwnersName) {
  SegmentCache cache(Roomy());
  SharedFile a(kPage);
  cache.PutPeer(a.Peer(5));
  PeerSegment name = a.Peer(5);
  name.addr = nullptr;
  name.serial = 6;  // a newer segment of the same owner
  EXPECT_EQ(cache.TakePeer(name), nullptr);
  name.serial = 5;
  name.pid = 43;
  EXPECT_EQ(cache.TakePeer(name), nullptr);
  name.pid = 42;
  EXPECT_EQ(cache.TakePeer(name), a.peer);
  EXPECT_EQ(cache.TakePeer(name), nullptr);  // taken: in use again
}

TEST(SegmentCacheTest, PeerMappingsOfDroppedSegmentsGoFirst) {
  SegmentCache::Limits limits = Roomy();
  limits.peer_entries = 2;
  SegmentCache cache(limits);
  SharedFile a(kPage), b(kPage), c(kPage);
  cache.PutPeer(a.Peer(1));
  cache.PutPeer(b.Peer(2));
  // b's owner dropped it: b goes, although a was freed before it.
  std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(b.owner))
      .store(SegmentCache::kDroppedMark);
  cache.PutPeer(c.Peer(3));
  EXPECT_FALSE(SharedFile::Mapped(b.peer));
  EXPECT_TRUE(SharedFile::Mapped(a.peer));
  // None dropped: the least recently freed goes.
  SharedFile d(kPage);
  cache.PutPeer(d.Peer(4));
  EXPECT_FALSE(SharedFile::Mapped(a.peer));
  EXPECT_TRUE(SharedFile::Mapped(c.peer));
  EXPECT_EQ(cache.cached_bytes(), 2 * kPage);
}

TEST(SegmentCacheTest, FlushLetsGoOfEverything) {
  SegmentCache cache(Roomy());
  SharedFile a(kPage), b(kPage);
  ASSERT_TRUE(cache.HoldDescriptor(kPage));
  cache.PutOwn(a.Own(1));
  cache.PutPeer(b.Peer(2));
  EXPECT_TRUE(cache.Flush());
  EXPECT_FALSE(SharedFile::Mapped(a.owner));
  EXPECT_FALSE(SharedFile::Mapped(b.peer));
  EXPECT_EQ(cache.cached_bytes(), 0u);
  EXPECT_FALSE(cache.Flush());
}

TEST(SegmentCacheTest, CachesNothingWithoutBudget) {
  SegmentCache::Limits limits;  // all zero
  SegmentCache cache(limits);
  EXPECT_FALSE(cache.HoldDescriptor(kPage));
  SharedFile a(kPage);
  cache.PutPeer(a.Peer(1));
  EXPECT_FALSE(SharedFile::Mapped(a.peer));
  EXPECT_EQ(cache.cached_bytes(), 0u);
}

}  // namespace
}  // namespace rmashim
