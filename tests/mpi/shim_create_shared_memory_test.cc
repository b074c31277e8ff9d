// MPI_Win_create memory made node-shared (shim/windows/shared_user_memory.h):
// the application's pages are copied into a shared file and mapped over at
// MPI_Win_create, so node peers reach them with loads and stores. What must
// hold: the window's contents and the program's other data on the same
// pages survive the remap; windows over the same pages, at once or one
// after another, see one copy of them; a window over pages that a live
// window shares only in part, memory on the stack and memory of a process
// that started a thread after MPI_Init stay on the cross-memory path and
// are still right; a buffer freed and allocated again is not mistaken for
// the old one. With RMASHIM_SHARE_CREATE_MEMORY=0 nothing is shared and
// every check on data must hold all the same.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::IsMapped;
using rmashim_test::Rank;
using rmashim_test::SameNode;
using rmashim_test::Size;

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

bool SharingOn() {
  const char* env = std::getenv("RMASHIM_SHARE_CREATE_MEMORY");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

// Whether every node peer reaches this window's memory of every rank by
// mapping (`expected`), and this rank its own.
void ExpectMapped(MPI_Win win, bool expected, const char* what) {
  for (int r = 0; r < Size(); ++r) {
    if (r == Rank()) {
      EXPECT_TRUE(IsMapped(win, r)) << what << ": own memory";
    } else if (SameNode(r)) {
      EXPECT_EQ(IsMapped(win, r), expected) << what << ": rank " << r;
    } else {
      EXPECT_FALSE(IsMapped(win, r)) << what << ": off-node rank " << r;
    }
  }
}

// Threads of this process as the kernel counts them (/proc/self/task).
long ThreadsNow() {
  long n = 0;
  for ([[maybe_unused]] const auto& task :
       std::filesystem::directory_iterator("/proc/self/task")) {
    ++n;
  }
  return n;
}

// pthread_join returns once the kernel has cleared the thread's id, which
// it does before it takes the thread off the process's thread count, so
// for a moment after a join the count (what the shim reads at
// MPI_Win_create) still includes it. Waits, at most ten seconds, until the
// count is back to `threads`.
bool WaitForThreadCount(long threads) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ThreadsNow() != threads) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

MPI_Win Create(void* base, size_t bytes) {
  MPI_Win win = MPI_WIN_NULL;
  EXPECT_EQ(MPI_Win_create(base, static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL,
                           MPI_COMM_WORLD, &win),
            MPI_SUCCESS);
  EXPECT_MANAGED(win);
  return win;
}

// Every rank puts 64 bytes of (rank + 1 + salt) at byte 64 * rank of every
// rank's window, and adds rank + 1 to the int64 at byte `counter` of rank
// 0's window ten times with fetch_and_op; then checks its own window.
void PutEverywhereAndCheck(MPI_Win win, unsigned char* own, int salt,
                           size_t counter) {
  const int me = Rank(), n = Size();
  std::vector<unsigned char> block(64,
                                   static_cast<unsigned char>(me + 1 + salt));
  MPI_Win_lock_all(0, win);
  for (int t = 0; t < n; ++t) {
    MPI_Put(block.data(), 64, MPI_BYTE, t, 64 * me, 64, MPI_BYTE, win);
  }
  const int64_t one = me + 1;
  int64_t old = 0;
  for (int i = 0; i < 10; ++i) {
    MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, static_cast<MPI_Aint>(counter),
                     MPI_SUM, win);
    MPI_Win_flush(0, win);
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win);
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < 64; ++i) {
      ASSERT_EQ(own[64 * r + i], static_cast<unsigned char>(r + 1 + salt))
          << "block of rank " << r << " byte " << i;
    }
  }
  if (me == 0) {
    int64_t total = 0;
    std::memcpy(&total, own + counter, sizeof(total));
    EXPECT_EQ(total, 10LL * n * (n + 1) / 2);
  }
  MPI_Win_unlock(me, win);
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(CreateSharedMemoryTest, HeapBufferKeepsItsNeighbours) {
  // A window in the middle of a heap block, its first and last pages
  // shared with bytes of the program that are no part of it.
  const size_t before = 96, bytes = 5000, after = 3 * kPage;
  std::vector<unsigned char> block(before + bytes + after);
  unsigned char* window = block.data() + before;
  for (size_t i = 0; i < block.size(); ++i) {
    block[i] = static_cast<unsigned char>(i * 7 + Rank());
  }
  MPI_Win win = Create(window, bytes);
  ExpectMapped(win, SharingOn(), "heap window");
  for (size_t i = 0; i < block.size(); ++i) {  // nothing moved or lost
    ASSERT_EQ(block[i], static_cast<unsigned char>(i * 7 + Rank())) << i;
  }
  std::memset(window + 4096, 0, 8);  // the counter
  MPI_Barrier(MPI_COMM_WORLD);
  PutEverywhereAndCheck(win, window, 0, 4096);
  // The program's bytes beside the window, written after the remap, stay
  // its own and untouched by the puts.
  for (size_t i = 0; i < before; ++i) block[i] = static_cast<unsigned char>(~i);
  for (size_t i = before + bytes; i < block.size(); ++i) {
    ASSERT_EQ(block[i], static_cast<unsigned char>(i * 7 + Rank())) << i;
  }
  for (size_t i = 0; i < before; ++i) {
    ASSERT_EQ(block[i], static_cast<unsigned char>(~i));
  }
  MPI_Win_free(&win);
  // The memory works as before once the window is gone.
  std::memset(window, 0x3c, bytes);
  EXPECT_EQ(window[bytes - 1], 0x3c);
}

TEST(CreateSharedMemoryTest, WindowsOverTheSamePagesShareThem) {
  const size_t bytes = 8 * kPage;
  void* memory = nullptr;
  ASSERT_EQ(posix_memalign(&memory, kPage, bytes), 0);
  auto* own = static_cast<unsigned char*>(memory);
  std::memset(own, 0, bytes);
  MPI_Win a = Create(own, bytes);
  MPI_Win b = Create(own, bytes);  // the same pages, both live
  ExpectMapped(a, SharingOn(), "first window");
  ExpectMapped(b, SharingOn(), "second window over the same pages");
  const int me = Rank(), n = Size(), right = (me + 1) % n;
  const int64_t value = 1000 + me;
  MPI_Win_lock_all(0, a);
  MPI_Put(&value, 1, MPI_INT64_T, right, 8 * kPage - 8 - 8 * me, 1, MPI_INT64_T,
          a);
  MPI_Win_unlock_all(a);
  MPI_Barrier(MPI_COMM_WORLD);
  int64_t seen = 0;
  MPI_Win_lock_all(0, b);  // what was put through a, read through b
  MPI_Get(&seen, 1, MPI_INT64_T, right, 8 * kPage - 8 - 8 * me, 1, MPI_INT64_T,
          b);
  MPI_Win_unlock_all(b);
  EXPECT_EQ(seen, value);
  MPI_Win_free(&b);
  MPI_Win_free(&a);
  // Again over the same buffer: its contents are the program's.
  MPI_Win c = Create(own, bytes);
  ExpectMapped(c, SharingOn(), "window over a freed window's pages");
  seen = 0;
  MPI_Win_lock_all(0, c);
  MPI_Get(&seen, 1, MPI_INT64_T, right, 8 * kPage - 8 - 8 * me, 1, MPI_INT64_T,
          c);
  MPI_Win_unlock_all(c);
  EXPECT_EQ(seen, value);
  MPI_Barrier(MPI_COMM_WORLD);  // every rank has read its neighbour's
  std::memset(own, 0, bytes);
  MPI_Barrier(MPI_COMM_WORLD);
  PutEverywhereAndCheck(c, own, 5, 4 * kPage);
  MPI_Win_free(&c);
  std::free(memory);
}

// Many live windows over small heap buffers, as a program with a window per
// object makes them: several on one page (the first window's file serves
// the others), some across a page boundary beside a live window's file
// (cross memory). Each window's data is right, and most are mapped. Fewer
// windows than the idle files remembered (kRememberedIdle in
// shim/windows/shared_user_memory.cc), so that the pages stay shareable for
// the tests after this one.
TEST(CreateSharedMemoryTest, ManyLiveWindowsOverSmallHeapBuffers) {
  constexpr int kWindows = 16;
  const int me = Rank(), n = Size(), right = (me + 1) % n;
  const int left = (me + n - 1) % n;
  std::vector<int64_t*> buffers(kWindows);
  std::vector<MPI_Win> wins(kWindows);
  for (int w = 0; w < kWindows; ++w) {
    buffers[w] = static_cast<int64_t*>(std::calloc(n, sizeof(int64_t)));
    ASSERT_NE(buffers[w], nullptr);
    wins[w] = Create(buffers[w], n * sizeof(int64_t));
  }
  int mapped = 0;
  for (int w = 0; w < kWindows; ++w) {
    mapped += IsMapped(wins[w], right);
    const int64_t value = int64_t{1000} * me + w;
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, wins[w]);
    MPI_Put(&value, 1, MPI_INT64_T, right, me * sizeof(int64_t), 1, MPI_INT64_T,
            wins[w]);
    MPI_Win_unlock(right, wins[w]);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  for (int w = 0; w < kWindows; ++w) {
    MPI_Win_lock(MPI_LOCK_SHARED, me, 0, wins[w]);
    EXPECT_EQ(buffers[w][left], int64_t{1000} * left + w) << "window " << w;
    MPI_Win_unlock(me, wins[w]);
  }
  if (SharingOn() && SameNode(right)) {
    EXPECT_GE(mapped, kWindows / 2) << "windows mapped by a node peer";
  } else if (!SharingOn()) {
    EXPECT_EQ(mapped, 0);
  }
  for (int w = kWindows - 1; w >= 0; --w) MPI_Win_free(&wins[w]);
  for (int64_t* b : buffers) std::free(b);
}

TEST(CreateSharedMemoryTest, PartOfALiveWindowStaysOnCrossMemory) {
  // On this node's ranks only: MPICH 4.0.2 itself misplaces the data of
  // windows whose pages overlap a live window's (it takes the start of a
  // registration merged with the earlier window's for the base), and on
  // windows spanning the simulated nodes its locks then hang.
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  int me = 0, n = 0;
  MPI_Comm_rank(node, &me);
  MPI_Comm_size(node, &n);
  // Fresh pages of their own (heap pages may lie inside a file a freed
  // window left, which both windows would then share whole).
  const size_t bytes = 6 * kPage;
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(memory, MAP_FAILED);
  auto* own = static_cast<unsigned char*>(memory);
  std::memset(own, 0, bytes);
  MPI_Win a, b;
  ASSERT_EQ(MPI_Win_create(own, 3 * kPage, 1, MPI_INFO_NULL, node, &a),
            MPI_SUCCESS);  // pages 0-2
  ASSERT_EQ(
      MPI_Win_create(own + 2 * kPage, 3 * kPage, 1, MPI_INFO_NULL, node, &b),
      MPI_SUCCESS);  // pages 2-4: page 2 in both
  EXPECT_MANAGED(a);
  EXPECT_MANAGED(b);
  for (int r = 0; r < n; ++r) {
    if (r == me) continue;
    EXPECT_EQ(IsMapped(a, r), SharingOn()) << "first window, rank " << r;
    EXPECT_FALSE(IsMapped(b, r))
        << "window over part of a live one, rank " << r;
  }
  const int right = (me + 1) % n;
  const int64_t value = 7000 + me;
  // Into page 2 through b (cross-memory), out through a (mapped).
  MPI_Win_lock_all(0, b);
  MPI_Put(&value, 1, MPI_INT64_T, right, 8 * me, 1, MPI_INT64_T, b);
  MPI_Win_unlock_all(b);
  MPI_Barrier(node);
  int64_t seen = 0;
  MPI_Win_lock_all(0, a);
  MPI_Get(&seen, 1, MPI_INT64_T, right, 2 * kPage + 8 * me, 1, MPI_INT64_T, a);
  MPI_Win_unlock_all(a);
  EXPECT_EQ(seen, value);
  // MPI_WIN_BASE is the memory the program gave.
  void* base = nullptr;
  int flag = 0;
  MPI_Win_get_attr(b, MPI_WIN_BASE, &base, &flag);
  EXPECT_EQ(base, own + 2 * kPage);
  MPI_Win_free(&b);
  MPI_Win_free(&a);
  munmap(memory, bytes);
  MPI_Comm_free(&node);
}

TEST(CreateSharedMemoryTest, FreedAndAllocatedAgainIsNew) {
  // Large enough for malloc to map and unmap it on its own.
  const size_t bytes = 512 * 1024;
  for (int round = 0; round < 3; ++round) {
    auto* own = static_cast<unsigned char*>(std::malloc(bytes));
    ASSERT_NE(own, nullptr);
    std::memset(own, 0x40 + round, bytes);
    MPI_Win win = Create(own, bytes);
    ExpectMapped(win, SharingOn(), "window over a reallocated buffer");
    const int right = (Rank() + 1) % Size();
    unsigned char seen[16] = {};
    MPI_Win_lock_all(0, win);
    MPI_Get(seen, 16, MPI_BYTE, right, bytes - 16, 16, MPI_BYTE, win);
    MPI_Win_unlock_all(win);
    for (unsigned char c : seen)
      ASSERT_EQ(c, 0x40 + round) << "round " << round;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    std::free(own);
  }
}

TEST(CreateSharedMemoryTest, StackMemoryStaysOnCrossMemory) {
  unsigned char own[8192];
  std::memset(own, 0, sizeof(own));
  MPI_Win win = Create(own, sizeof(own));
  ExpectMapped(win, false, "window on the stack");
  PutEverywhereAndCheck(win, own, 9, 4096);
  MPI_Win_free(&win);
}

TEST(CreateSharedMemoryTest, ThreadStartedAfterInitKeepsCrossMemory) {
  const size_t bytes = 2 * kPage;
  std::vector<unsigned char> memory(bytes + kPage);
  unsigned char* own = memory.data();
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  const long threads_before = ThreadsNow();
  std::thread computing([&] {  // a thread of the program's, alive meanwhile
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return done; });
  });
  std::memset(own, 0, bytes);
  MPI_Win win = Create(own, bytes);
  ExpectMapped(win, false, "window of a process with a thread of its own");
  PutEverywhereAndCheck(win, own, 11, kPage);
  MPI_Win_free(&win);
  {
    std::lock_guard<std::mutex> lock(m);
    done = true;
  }
  cv.notify_one();
  computing.join();
  EXPECT_TRUE(WaitForThreadCount(threads_before))
      << "the joined thread is still counted after ten seconds";
  std::memset(own, 0, bytes);
  win = Create(own, bytes);  // the thread is gone: shared again
  ExpectMapped(win, SharingOn(), "window once the thread has ended");
  PutEverywhereAndCheck(win, own, 13, kPage);
  MPI_Win_free(&win);
}

}  // namespace
