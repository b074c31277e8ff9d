// Maps an application's MPI_Win handle to its ManagedWindow in O(1).
// Lookups are lock-free (a hash and, on collision, a short probe), so the
// node-local put path stays cheap; inserts and erases are serialized.
#ifndef RMASHIM_SHIM_PROCESS_WINDOW_TABLE_H_
#define RMASHIM_SHIM_PROCESS_WINDOW_TABLE_H_

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

namespace rmashim {

class ManagedWindow;

class WindowTable {
 public:
  static constexpr int kCapacity = 4096;  // live managed windows at most

  // nullptr when `win` is not managed (then the call passes through).
  // Usually the window sits in its home slot: one compare, no loop (a
  // matching key implies its window pointer: Insert stores the pointer
  // first and publishes the key after it).
  ManagedWindow* Find(MPI_Win win) const {
    const uint32_t home = Hash(win);
    const Slot& slot = slots_[home];
    if (slot.key.load(std::memory_order_acquire) == win) [[likely]] {
      return slot.window.load(std::memory_order_relaxed);
    }
    return Probe(win, home);
  }
  // The home slot alone: nullptr also when the window sits elsewhere. For
  // inlined fast paths, whose miss goes to a full path that calls Find: no
  // probe loop there keeps their registers free.
  ManagedWindow* FindHome(MPI_Win win) const {
    const Slot& slot = slots_[Hash(win)];
    if (slot.key.load(std::memory_order_acquire) == win) [[likely]] {
      ManagedWindow* window = slot.window.load(std::memory_order_relaxed);
      // Insert publishes the key after the pointer, and Erase withdraws
      // the key first: a key seen here has its window (a call racing the
      // window's free is erroneous, and would use a freed window anyway).
      // So callers' null tests on a hit compile away.
      if (window == nullptr) __builtin_unreachable();
      return window;
    }
    return nullptr;
  }

  // Room for one more window, claimed before a collective window creation
  // so that the Insert after it cannot fail on this rank alone (the ranks
  // agree on the outcome of Reserve: see wrap_window.cc). Release gives the
  // room back (window freed, or not managed after all).
  bool Reserve();
  void Release();
  // Test hook (RMASHIM_TEST_WINDOW_LIMIT): at most `limit` live windows.
  void SetLimit(int limit);
  // Test hook (RMASHIM_TEST_DISPLACE_WINDOWS): every window inserted from
  // now on sits past its home slot, as after a collision, so the fast
  // paths' FindHome misses and their full paths must find it.
  void SetDisplaced(bool displaced);

  // False when full (kCapacity, or the limit).
  bool Insert(MPI_Win win, ManagedWindow* window);
  ManagedWindow* Erase(MPI_Win win);  // returns what was stored

 private:
  // MPICH window handles are never 0; MPI_WIN_NULL marks an erased slot so
  // probes continue past it.
  static constexpr MPI_Win kEmpty = 0;
  static constexpr MPI_Win kErased = MPI_WIN_NULL;

  struct Slot {
    std::atomic<MPI_Win> key{kEmpty};
    std::atomic<ManagedWindow*> window{nullptr};
  };

  // Past the home slot (collisions, erased slots, unmanaged windows).
  ManagedWindow* Probe(MPI_Win win, uint32_t home) const {
    for (uint32_t i = home, n = 0; n < kCapacity; ++n, ++i) {
      const Slot& slot = slots_[i % kCapacity];
      const MPI_Win key = slot.key.load(std::memory_order_acquire);
      if (key == win) return slot.window.load(std::memory_order_relaxed);
      if (key == kEmpty) return nullptr;
    }
    return nullptr;
  }

  static uint32_t Hash(MPI_Win win) {
    return (static_cast<uint32_t>(win) * 2654435761u) >> 20;  // 12 bits
  }

  std::array<Slot, kCapacity> slots_;
  std::mutex write_mutex_;  // guards the counts below and all slot writes
  int limit_ = kCapacity;
  bool displaced_ = false;
  int live_ = 0;      // inserted, not erased
  int reserved_ = 0;  // Reserve minus Release
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_PROCESS_WINDOW_TABLE_H_
