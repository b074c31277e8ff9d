// The windows this process's agent serves (agent.h), by the id that remote
// origins name them with. A window spanning nodes registers at its
// creation (ManagedWindow::JoinAgent) and leaves in its destructor; the
// agent (its thread, or an epoch end serving in its place) looks requests'
// windows up under the registry's mutex,
// so a window is never freed while the agent applies an update to it.
// Open only while the agent runs: a window created without an agent gets
// no id, and its peers then send this process nothing. Here, beside the
// windows, so that creating a window needs nothing of the agent.
#ifndef RMASHIM_SHIM_WINDOWS_SERVED_WINDOWS_H_
#define RMASHIM_SHIM_WINDOWS_SERVED_WINDOWS_H_

#include <mutex>
#include <vector>

namespace rmashim {

class ManagedWindow;

class ServedWindows {
 public:
  // StartAgent, with how to tell whether the agents' transport reaches a
  // world rank's agent (creating what it needs to).
  void Open(bool (*reaches)(int world_rank) = nullptr);
  void Close();  // StopAgent, after its thread has stopped
  // Whether the transport reaches `world_rank`'s agent; false when closed.
  bool Reaches(int world_rank);

  // The id `w` is named by from now on; -1 when closed or full. An id is a
  // slot and the slot's generation, so a request for a freed window is not
  // taken for the next 2^17 - 1 windows in the same slot (after a lost
  // link an epoch may end before every update to it has arrived: agent.h).
  // 2^14 slots: MPICH has 2048 context ids, one per window.
  int Register(ManagedWindow* w);
  // `id` (-1: none) is free again; an id whose slot has since served a
  // later window frees nothing.
  void Unregister(int id);

  // The window with `id`, or null. The caller holds mutex().
  ManagedWindow* Find(int id) const;
  std::mutex& mutex() { return mutex_; }

 private:
  static constexpr int kSlotBits = 14;
  static constexpr int kSlotMask = (1 << kSlotBits) - 1;
  static constexpr int kGenerationMask = (1 << (31 - kSlotBits)) - 1;

  std::mutex mutex_;
  bool open_ = false;  // under mutex_
  bool (*reaches_)(int) = nullptr;
  struct Slot {
    ManagedWindow* window = nullptr;  // null: free
    int generation = 0;
  };
  std::vector<Slot> slots_;
};

ServedWindows& served_windows();

}  // namespace rmashim

#endif  // RMASHIM_SHIM_WINDOWS_SERVED_WINDOWS_H_
