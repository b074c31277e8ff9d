// The window table's writers: inserts, erases and the room reservations
// that keep managed-or-not decisions the same on every rank.
#include "shim/process/window_table.h"

#include <algorithm>

namespace rmashim {

bool WindowTable::Reserve() {
  std::lock_guard<std::mutex> guard(write_mutex_);
  if (reserved_ >= limit_) return false;
  ++reserved_;
  return true;
}

void WindowTable::Release() {
  std::lock_guard<std::mutex> guard(write_mutex_);
  if (reserved_ > 0) --reserved_;
}

void WindowTable::SetLimit(int limit) {
  std::lock_guard<std::mutex> guard(write_mutex_);
  limit_ = std::clamp(limit, 0, kCapacity);
}

void WindowTable::SetDisplaced(bool displaced) {
  std::lock_guard<std::mutex> guard(write_mutex_);
  displaced_ = displaced;
}

bool WindowTable::Insert(MPI_Win win, ManagedWindow* window) {
  std::lock_guard<std::mutex> guard(write_mutex_);
  if (live_ >= limit_) return false;
  uint32_t start = Hash(win);
  if (displaced_) {
    // An erased marker keeps the probe from the home slot going on.
    Slot& home = slots_[start];
    if (home.key.load(std::memory_order_relaxed) == kEmpty) {
      home.key.store(kErased, std::memory_order_release);
    }
    ++start;
  }
  for (uint32_t i = start, n = 0; n < kCapacity; ++n, ++i) {
    Slot& slot = slots_[i % kCapacity];
    const MPI_Win key = slot.key.load(std::memory_order_relaxed);
    if (key == kEmpty || key == kErased) {
      slot.window.store(window, std::memory_order_relaxed);
      slot.key.store(win, std::memory_order_release);
      ++live_;
      return true;
    }
  }
  return false;
}

ManagedWindow* WindowTable::Erase(MPI_Win win) {
  std::lock_guard<std::mutex> guard(write_mutex_);
  for (uint32_t i = Hash(win), n = 0; n < kCapacity; ++n, ++i) {
    Slot& slot = slots_[i % kCapacity];
    const MPI_Win key = slot.key.load(std::memory_order_relaxed);
    if (key == win) {
      ManagedWindow* window = slot.window.load(std::memory_order_relaxed);
      slot.key.store(kErased, std::memory_order_release);
      slot.window.store(nullptr, std::memory_order_relaxed);
      --live_;
      return window;
    }
    if (key == kEmpty) break;
  }
  return nullptr;
}

}  // namespace rmashim
