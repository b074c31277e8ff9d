// The segment cache's bookkeeping and its process-wide instance: which
// freed segments stay, which go, and how much the cache may hold.
#include "shim/windows/segment_cache.h"

#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "shim/process/runtime.h"

namespace rmashim {
namespace {

// Marks an own segment dropped (for peers that still map it) and lets go
// of it here.
void DropOwn(const OwnSegment& s) {
  std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(s.addr))
      .store(SegmentCache::kDroppedMark, std::memory_order_release);
  munmap(s.addr, s.bytes);
  if (s.fd >= 0) close(s.fd);
}

bool MarkedDropped(const PeerSegment& s) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(s.addr))
             .load(std::memory_order_acquire) == SegmentCache::kDroppedMark;
}

constexpr size_t kMiB = size_t{1} << 20;

// Bytes each part of the cache may hold.
size_t BudgetBytes() {
  const char* env = std::getenv("RMASHIM_SEGMENT_CACHE_MIB");
  if (env != nullptr && *env != '\0') {
    return static_cast<size_t>(std::max(0L, std::atol(env))) * kMiB;
  }
  struct statvfs fs;
  if (statvfs("/dev/shm", &fs) != 0) return 64 * kMiB;
  const size_t shm = static_cast<size_t>(fs.f_blocks) * fs.f_frsize;
  const size_t ranks =
      static_cast<size_t>(std::max(1, runtime().locality().node_size));
  return std::min(shm / 16 / ranks, 1024 * kMiB);
}

}  // namespace

bool SegmentCache::TakeOwn(size_t bytes, OwnSegment* out) {
  std::lock_guard<std::mutex> guard(mutex_);
  for (auto it = own_.begin(); it != own_.end(); ++it) {
    if (it->bytes != bytes) continue;
    *out = *it;
    own_bytes_ -= it->bytes;
    own_.erase(it);
    ++held_fds_;
    return true;
  }
  return false;
}

bool SegmentCache::HoldDescriptor(size_t bytes) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (bytes > limits_.own_bytes || held_fds_ >= limits_.held_fds) return false;
  ++held_fds_;
  return true;
}

void SegmentCache::ReleaseDescriptor() {
  std::lock_guard<std::mutex> guard(mutex_);
  --held_fds_;
}

void SegmentCache::PutOwn(const OwnSegment& segment) {
  std::lock_guard<std::mutex> guard(mutex_);
  --held_fds_;
  own_.push_front(segment);
  own_bytes_ += segment.bytes;
  TrimOwn();
}

std::byte* SegmentCache::TakePeer(const PeerSegment& name) {
  std::lock_guard<std::mutex> guard(mutex_);
  for (auto it = peers_.begin(); it != peers_.end(); ++it) {
    if (it->pid != name.pid || it->dev != name.dev || it->ino != name.ino ||
        it->serial != name.serial || it->bytes != name.bytes) {
      continue;
    }
    std::byte* addr = it->addr;
    peer_bytes_ -= it->bytes;
    peers_.erase(it);
    return addr;
  }
  return nullptr;
}

void SegmentCache::PutPeer(const PeerSegment& segment) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (segment.bytes > limits_.peer_bytes) {
    munmap(segment.addr, segment.bytes);
    return;
  }
  peers_.push_front(segment);
  peer_bytes_ += segment.bytes;
  TrimPeers();
}

bool SegmentCache::Flush() {
  std::lock_guard<std::mutex> guard(mutex_);
  const bool any = !own_.empty() || !peers_.empty();
  for (const OwnSegment& s : own_) DropOwn(s);
  for (const PeerSegment& s : peers_) munmap(s.addr, s.bytes);
  own_.clear();
  peers_.clear();
  own_bytes_ = peer_bytes_ = 0;
  return any;
}

size_t SegmentCache::cached_bytes() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return own_bytes_ + peer_bytes_;
}

void SegmentCache::TrimOwn() {
  while (!own_.empty() &&
         (own_bytes_ > limits_.own_bytes ||
          static_cast<int>(own_.size()) > limits_.own_entries)) {
    DropOwn(own_.back());
    own_bytes_ -= own_.back().bytes;
    own_.pop_back();
  }
}

void SegmentCache::TrimPeers() {
  auto over = [this] {
    return peer_bytes_ > limits_.peer_bytes ||
           static_cast<int>(peers_.size()) > limits_.peer_entries;
  };
  if (!over()) return;
  // Segments their owners have dropped hold memory for nobody else: first.
  for (auto it = peers_.begin(); it != peers_.end() && over();) {
    if (!MarkedDropped(*it)) {
      ++it;
      continue;
    }
    munmap(it->addr, it->bytes);
    peer_bytes_ -= it->bytes;
    it = peers_.erase(it);
  }
  while (!peers_.empty() && over()) {
    munmap(peers_.back().addr, peers_.back().bytes);
    peer_bytes_ -= peers_.back().bytes;
    peers_.pop_back();
  }
}

SegmentCache& segment_cache() {
  // Never destroyed: windows may be freed during exit.
  static SegmentCache* cache = [] {
    SegmentCache::Limits limits;
    limits.own_bytes = limits.peer_bytes = BudgetBytes();
    limits.own_entries = 16;
    limits.peer_entries = 512;
    limits.held_fds = 64;
    return new SegmentCache(limits);
  }();
  return *cache;
}

}  // namespace rmashim
