// Cross-memory attach (process_vm_readv/writev) by node-local peers needs
// ptrace access to this process, which Yama's ptrace_scope=1 refuses to
// non-ancestors. prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY) lifts that for
// the whole process, so the shim does it only while memory that peers reach
// that way exists (MPI_Win_create windows with node-local peers, DART
// registered memory), and resets it when the last such memory goes.
#ifndef RMASHIM_SHIM_WINDOWS_PTRACER_H_
#define RMASHIM_SHIM_WINDOWS_PTRACER_H_

namespace rmashim {

// One holder of the process-wide grant: the first Hold sets
// PR_SET_PTRACER_ANY, the last Drop (or destruction) resets it to none.
class CrossMemoryGrant {
 public:
  CrossMemoryGrant() = default;
  ~CrossMemoryGrant() { Drop(); }
  CrossMemoryGrant(const CrossMemoryGrant&) = delete;
  CrossMemoryGrant& operator=(const CrossMemoryGrant&) = delete;

  void Hold();  // no-op if already held
  void Drop();  // no-op if not held
  bool held() const { return held_; }

 private:
  bool held_ = false;
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_WINDOWS_PTRACER_H_
