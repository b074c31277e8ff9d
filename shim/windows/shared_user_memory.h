// MPI_Win_create memory made node-shared, so node-local origins reach it
// with loads, stores and CPU atomics as they reach MPI_Win_allocate memory,
// not with a cross-memory system call per operation (cross_memory.h: a
// process_vm_writev costs about as much as MPICH's own shared-memory path,
// and an accumulate needs two).
//
// The memory is the application's: private anonymous pages of its heap or
// of its own mmap. At MPI_Win_create, before MPI sees the memory, the owner
// copies the whole pages under the window into an unnamed file on
// /dev/shm's tmpfs (as node_segments.h makes segments) and maps the file
// over them at the same addresses, MAP_FIXED and MAP_SHARED. To the
// application nothing changed: same addresses, same contents, same
// protection; its node peers then map the file through /proc/<pid>/fd.
// Done in chunks, so at most one chunk is held twice; a failure part way
// leaves every page with the right contents (each chunk is copied before it
// is mapped over) and the window on the cross-memory path.
//
// When it is safe, and why:
//  - Only private anonymous read-write memory is remapped (/proc/self/maps):
//    not file mappings, not shared memory, not the stack, not device memory.
//  - Copying and mapping over loses stores that another thread makes to
//    those pages meanwhile, and the first and last pages may hold other
//    data of the program. So it is done only while no thread has been
//    started since MPI_Init: the process has as many threads as MPI_Init
//    left it (MPI's and the network library's own threads do not touch
//    application memory). Not on the thread level alone: programs that ask
//    for MPI_THREAD_SINGLE and compute with OpenMP threads are common.
//    A thread just joined may still be counted for a moment (the kernel
//    wakes pthread_join before it drops the thread from the count): a
//    window created then stays on the cross-memory path, right but slower.
//  - Before PMPI_Win_create: MPI registers the memory for remote access
//    (RDMA) there, and must register the pages that stay.
//  - A buffer can serve many windows, one after the other or at once. The
//    process remembers the files it mapped (and keeps their descriptors for
//    peers to open); a window over pages that one file backs entirely
//    reuses it, so every window over a page shares one copy of it. Pages
//    that a live window shares are never copied again: a window that would
//    cover them only in part stays on the cross-memory path.
//  - The pages stay shared after MPI_Win_free (the program may go on using
//    them; they behave as before). A remembered file whose mapping the
//    program has since unmapped (free of a large buffer) is forgotten at
//    the next MPI_Win_create. Left alone: a fork() child would share those
//    pages instead of copying them.
//
// RMASHIM_SHARE_CREATE_MEMORY=0 keeps every MPI_Win_create window on the
// cross-memory path.
#ifndef RMASHIM_SHIM_WINDOWS_SHARED_USER_MEMORY_H_
#define RMASHIM_SHIM_WINDOWS_SHARED_USER_MEMORY_H_

#include <sys/types.h>

#include <cstddef>

namespace rmashim {

// How node peers find a window's memory: the descriptor `fd` of the owner's
// file (dev, ino to check it is that file) and where the window's base lies
// in it. fd -1: not shared (peers use cross-memory attach).
struct UserMemoryId {
  long fd = -1;
  long dev = 0;
  long ino = 0;
  long offset = 0;
};

// Records the process's thread count as MPI_Init leaves it (Runtime::Start).
void NoteThreadsAtInit();
// The shim started a thread of its own (agent.h), which parks while pages
// are copied and mapped over (AgentParked): it does not count.
void NoteShimThreadStarted();

// Local. Backs the pages under [base, base + size) with a node-shareable
// file (or finds them backed already) and counts one more window on it.
// Returns fd -1 when it may not or cannot; the memory is then as it was.
UserMemoryId ShareUserMemory(void* base, size_t size);
// The window that ShareUserMemory returned `id` for is gone (or was not
// managed after all): one window less on its file.
void UnshareUserMemory(const UserMemoryId& id);

// A node peer's shared window memory mapped into this process, unmapped
// when destroyed.
class PeerUserMemory {
 public:
  PeerUserMemory() = default;
  ~PeerUserMemory();
  PeerUserMemory(PeerUserMemory&& other) noexcept;
  PeerUserMemory& operator=(PeerUserMemory&&) = delete;
  PeerUserMemory(const PeerUserMemory&) = delete;
  PeerUserMemory& operator=(const PeerUserMemory&) = delete;

  // Maps `bytes` of window memory that process `pid` announced as `id`;
  // returns the window's base here, or null if it cannot (the peer's
  // descriptor refused or not the file described).
  std::byte* Map(pid_t pid, const UserMemoryId& id, size_t bytes);

 private:
  void* addr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace rmashim

#endif  // RMASHIM_SHIM_WINDOWS_SHARED_USER_MEMORY_H_
