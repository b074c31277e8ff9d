#include "shim/window_table.h"

namespace rmashim {

bool WindowTable::Insert(MPI_Win win, ManagedWindow* window) {
  std::lock_guard<std::mutex> guard(write_mutex_);
  for (uint32_t i = Hash(win), n = 0; n < kCapacity; ++n, ++i) {
    Slot& slot = slots_[i % kCapacity];
    const MPI_Win key = slot.key.load(std::memory_order_relaxed);
    if (key == kEmpty || key == kErased) {
      slot.window.store(window, std::memory_order_relaxed);
      slot.key.store(win, std::memory_order_release);
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
      return window;
    }
    if (key == kEmpty) break;
  }
  return nullptr;
}

}  // namespace rmashim
