// The windows the agent serves, by id (served_windows.h).
#include "shim/windows/served_windows.h"

#include <algorithm>

namespace rmashim {

void ServedWindows::Open(bool (*reaches)(int world_rank)) {
  std::lock_guard<std::mutex> guard(mutex_);
  open_ = true;
  reaches_ = reaches;
}

void ServedWindows::Close() {
  std::lock_guard<std::mutex> guard(mutex_);
  open_ = false;
  reaches_ = nullptr;
}

bool ServedWindows::Reaches(int world_rank) {
  bool (*reaches)(int);
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (!open_ || reaches_ == nullptr) return false;
    reaches = reaches_;
  }
  return reaches(world_rank);
}

int ServedWindows::Register(ManagedWindow* w) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (!open_) return -1;
  auto free_slot = std::find_if(slots_.begin(), slots_.end(),
                                [](const Slot& s) { return !s.window; });
  if (free_slot == slots_.end()) {
    if (slots_.size() > static_cast<size_t>(kSlotMask)) return -1;
    free_slot = slots_.insert(slots_.end(), Slot{});
  }
  free_slot->window = w;
  free_slot->generation = (free_slot->generation + 1) & kGenerationMask;
  return static_cast<int>(free_slot - slots_.begin()) |
         (free_slot->generation << kSlotBits);
}

void ServedWindows::Unregister(int id) {
  if (id < 0) return;
  std::lock_guard<std::mutex> guard(mutex_);
  // Only the window `id` names: a stale id leaves a later window alone.
  if (Find(id) != nullptr) slots_[id & kSlotMask].window = nullptr;
}

ManagedWindow* ServedWindows::Find(int id) const {
  if (id < 0) return nullptr;
  const auto slot = static_cast<size_t>(id & kSlotMask);
  if (slot >= slots_.size() || slots_[slot].generation != (id >> kSlotBits)) {
    return nullptr;
  }
  return slots_[slot].window;
}

ServedWindows& served_windows() {
  static ServedWindows registry;
  return registry;
}

}  // namespace rmashim
