// The windows the agent serves, by id (served_windows.h).
#include "shim/windows/served_windows.h"

#include <algorithm>

namespace rmashim {

void ServedWindows::Open() {
  std::lock_guard<std::mutex> guard(mutex_);
  open_ = true;
}

void ServedWindows::Close() {
  std::lock_guard<std::mutex> guard(mutex_);
  open_ = false;
}

int ServedWindows::Register(ManagedWindow* w) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (!open_) return -1;
  auto free_id = std::find(windows_.begin(), windows_.end(), nullptr);
  if (free_id != windows_.end()) {
    *free_id = w;
    return static_cast<int>(free_id - windows_.begin());
  }
  windows_.push_back(w);
  return static_cast<int>(windows_.size() - 1);
}

void ServedWindows::Unregister(int id) {
  if (id < 0) return;
  std::lock_guard<std::mutex> guard(mutex_);
  windows_[id] = nullptr;
}

ManagedWindow* ServedWindows::Find(int id) const {
  if (id < 0 || static_cast<size_t>(id) >= windows_.size()) return nullptr;
  return windows_[id];
}

ServedWindows& served_windows() {
  static ServedWindows registry;
  return registry;
}

}  // namespace rmashim
