// Which completion calls need a memory fence. Direct copies are complete
// when the call that made them returns, but their stores become visible to
// other processes in order with this thread's later loads only after a
// fence, so flush and unlock fence. A fence after nothing but locked
// read-modify-writes (the word atomics of fetch_and_op, compare_and_swap
// and small accumulates) is redundant on x86, where every locked
// instruction is a full barrier: each thread notes whether it made plain
// stores or copies to window memory since its last fence, and flush fences
// only then. Elsewhere every flush fences. Thread-local because a fence
// orders only the calling thread's own accesses.
#ifndef RMASHIM_SHIM_BASE_DIRECT_STORES_H_
#define RMASHIM_SHIM_BASE_DIRECT_STORES_H_

#include <atomic>

namespace rmashim {

#if defined(__x86_64__) || defined(__i386__)
inline constexpr bool kLockedRmwIsFullBarrier = true;
#else
inline constexpr bool kLockedRmwIsFullBarrier = false;
#endif

// Initial-exec: one %fs-relative load, no __tls_get_addr call on the hot
// path (the library is preloaded or linked, never loaded late by dlopen).
inline thread_local bool t_unfenced_stores
    __attribute__((tls_model("initial-exec"))) = false;

// After plain stores or copies to window memory (puts, gets, plain-loop
// accumulates, cross-memory writes).
inline void NoteDirectStores() { t_unfenced_stores = true; }

// Makes this thread's direct stores visible: a fence when it has any not
// yet fenced (always, off x86).
inline void PublishDirectStores() {
  if (!kLockedRmwIsFullBarrier || t_unfenced_stores) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    t_unfenced_stores = false;
  }
}

// Before releasing a lock word with a locked read-modify-write: on x86 that
// instruction is the fence itself.
inline void PublishBeforeLockedRelease() {
  if (kLockedRmwIsFullBarrier) {
    t_unfenced_stores = false;
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

// The same for the inline unlock: on x86 it leaves this thread's note of
// unfenced stores set, so it costs no instruction; a later flush may then
// fence once when it need not.
inline void PublishBeforeInlineLockedRelease() {
  if (!kLockedRmwIsFullBarrier) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

}  // namespace rmashim

#endif  // RMASHIM_SHIM_BASE_DIRECT_STORES_H_
