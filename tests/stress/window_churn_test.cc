// Window churn: 1,000 create/free cycles of each window flavor, each cycle
// with one put and one get verified. Nothing may accumulate: after a window
// is freed this rank maps no more /dev/shm memory than after the first
// cycle (node segments are unnamed tmpfs files, so a leak shows as a
// mapping, not a name; freed windows' segments stay in the shim's segment
// cache, a window's worth at most here, and come back in the next cycle;
// with the cache off, RMASHIM_SEGMENT_CACHE_MIB=0, no more than before the
// first cycle), and resident memory (live heap under ASan), open file
// descriptors and memory mappings after the last cycle stay within a small
// bound of what they were at the baseline cycle (50 of 1,000).
#include <dirent.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::HangWatchdog;
using rmashim_test::IsManaged;
using rmashim_test::Rank;
using rmashim_test::ScopedComm;
using rmashim_test::Size;
using rmashim_test::SplitNodeComm;

// 1,000 cycles unless STRESS_CYCLES says otherwise (runs with more ranks
// than cores use fewer: each cycle then costs up to a second).
const int kCycles = rmashim_test::EnvInt("STRESS_CYCLES", 1000);
const int kBaselineCycle = std::min(50, kCycles / 2);
// A cycle stuck this long is a hang (cycles take milliseconds when the ranks
// have a core each, up to a second or so when oversubscribed on a loaded
// machine).
constexpr double kCycleWatchdogSeconds = 60.0;

// Growth allowed between the baseline cycle and the last. A leak of one segment
// mapping, descriptor or a few KiB per cycle exceeds these many times over.
constexpr long kMemorySlackKiB = 2048;
constexpr long kFdSlack = 0;
constexpr long kMapsSlack = 4;

// Whether the count of mappings measures leaks in this run. TSan maps
// shadow for every address range the program maps and keeps it after
// munmap (entries of /proc/self/maps grow by ~4 per cycle on 8 ranks: each
// maps every peer's segment) until the kernel hands out the same addresses
// again; that settles within the 50 cycles before the baseline of a full
// run, not within a short oversubscribed one.
bool MapsMeasureLeaks() {
#ifdef __SANITIZE_THREAD__
  return kBaselineCycle >= 50;
#else
  return true;
#endif
}

// Lines of /proc/self/maps that contain `text` ("" counts them all).
int CountMappings(const char* text) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int count = 0;
  while (std::getline(maps, line)) {
    count += line.find(text) != std::string::npos;
  }
  return count;
}

// Mappings of the shim's node segments in this process, own and peers':
// unnamed (O_TMPFILE) tmpfs files, shown as "/dev/shm/#<inode> (deleted)";
// MPICH's own shared memory has names and is not counted.
int ShmMappings() { return CountMappings(" /dev/shm/#"); }

struct Usage {
  long memory_kib = -1;
  long fds = -1;
  long maps = -1;
};

#ifdef __SANITIZE_ADDRESS__
// Under ASan, VmRSS also holds the quarantine of freed memory (256 MiB by
// default) and the runtime's metadata, so it grows by design; the
// allocator's count of live heap bytes is the exact measure of leaks.
// (GCC 12 ships no <sanitizer/allocator_interface.h>; libasan exports it.)
extern "C" size_t __sanitizer_get_current_allocated_bytes();
constexpr const char* kMemoryName = "live heap";
long MemoryKiB() {
  return static_cast<long>(__sanitizer_get_current_allocated_bytes() / 1024);
}
#else
constexpr const char* kMemoryName = "rss";
long MemoryKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}
#endif

Usage CurrentUsage() {
  Usage u;
  u.memory_kib = MemoryKiB();
  u.fds = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (const dirent* e = readdir(dir)) u.fds += e->d_name[0] != '.';
    closedir(dir);
  }
  u.maps = CountMappings("");
  return u;
}

// What origin `o` writes into its right neighbour in cycle `c`.
int64_t Stamp(int o, int c) { return int64_t{o + 1} * 1000003 + c; }

enum class Flavor { kAllocate, kShared, kCreate, kDynamic };

const char* Name(Flavor f) {
  switch (f) {
    case Flavor::kAllocate:
      return "MPI_Win_allocate";
    case Flavor::kShared:
      return "MPI_Win_allocate_shared";
    case Flavor::kCreate:
      return "MPI_Win_create";
    case Flavor::kDynamic:
      return "MPI_Win_create_dynamic";
  }
  return "?";
}

// One cycle: create a window of `flavor` over `comm`, put a stamp into the
// right neighbour's cell 0, read it back with a get, free the window, and
// check what this rank's left neighbour wrote into its own memory wherever
// that memory outlives the window. Returns the number of bad values.
int Cycle(Flavor flavor, MPI_Comm comm, int cycle, bool* managed) {
  int rank = 0, size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int bad = 0;
  MPI_Win win = MPI_WIN_NULL;
  int64_t* mem = nullptr;
  int64_t own[2] = {-1, -1};  // memory of MPI_Win_create / dynamic windows
  MPI_Aint target_disp = 0;
  switch (flavor) {
    case Flavor::kAllocate:
      if (MPI_Win_allocate(2 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL,
                           comm, &mem, &win) != MPI_SUCCESS) {
        return 1000;
      }
      break;
    case Flavor::kShared:
      if (MPI_Win_allocate_shared(2 * sizeof(int64_t), sizeof(int64_t),
                                  MPI_INFO_NULL, comm, &mem,
                                  &win) != MPI_SUCCESS) {
        return 1000;
      }
      break;
    case Flavor::kCreate:
      mem = own;
      if (MPI_Win_create(own, sizeof(own), sizeof(int64_t), MPI_INFO_NULL, comm,
                         &win) != MPI_SUCCESS) {
        return 1000;
      }
      break;
    case Flavor::kDynamic: {
      mem = own;
      if (MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win) != MPI_SUCCESS ||
          MPI_Win_attach(win, own, sizeof(own)) != MPI_SUCCESS) {
        return 1000;
      }
      MPI_Aint mine = 0;
      MPI_Get_address(own, &mine);
      // Only the right neighbour's address is needed.
      MPI_Sendrecv(&mine, 1, MPI_AINT, left, 0, &target_disp, 1, MPI_AINT,
                   right, 0, comm, MPI_STATUS_IGNORE);
      break;
    }
  }
  *managed = IsManaged(win);
  // No initialization (and no barrier for it): the get reads back what the
  // put wrote. MPI_Win_create and dynamic memory (`own`) was initialized
  // before its address was known to anyone.
  const int64_t stamp = Stamp(rank, cycle);
  int64_t back = -1;
  MPI_Win_lock_all(0, win);
  if (MPI_Put(&stamp, 1, MPI_INT64_T, right, target_disp, 1, MPI_INT64_T,
              win) != MPI_SUCCESS) {
    ++bad;
  }
  MPI_Win_flush(right, win);
  if (MPI_Get(&back, 1, MPI_INT64_T, right, target_disp, 1, MPI_INT64_T, win) !=
      MPI_SUCCESS) {
    ++bad;
  }
  MPI_Win_unlock_all(win);
  bad += back != stamp;
  if (flavor == Flavor::kDynamic) {
    MPI_Barrier(comm);  // every origin is done before the memory goes away
    MPI_Win_detach(win, own);
  } else if (flavor != Flavor::kCreate && cycle % 10 == 0) {
    // Allocated memory goes away with the window: check it before, every
    // few cycles (a barrier per cycle would make cycles much dearer).
    MPI_Barrier(comm);
    bad += mem[0] != Stamp(left, cycle);
  }
  MPI_Win_free(&win);
  if (flavor == Flavor::kCreate || flavor == Flavor::kDynamic) {
    // MPI_Win_free returns when no access to this memory is outstanding.
    bad += own[0] != Stamp(left, cycle) || own[1] != -1;
  }
  return bad;
}

void Churn(Flavor flavor) {
  // MPI_Win_allocate_shared needs ranks that share memory.
  ScopedComm node(SplitNodeComm());
  const int shm_before = ShmMappings();
  if (flavor == Flavor::kAllocate) {
    // The probe sees a live window's segments (else the checks below would
    // pass vacuously).
    int64_t* mem = nullptr;
    MPI_Win win;
    ASSERT_EQ(
        MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win),
        MPI_SUCCESS);
    EXPECT_GT(ShmMappings(), shm_before) << "no /dev/shm mapping seen";
    MPI_Win_free(&win);
  }
  const MPI_Comm comm = flavor == Flavor::kShared ? node.get() : MPI_COMM_WORLD;
  const auto start = std::chrono::steady_clock::now();
  // Mappings a freed window may leave in the segment cache: its own and
  // each node peer's segment, of the probe's window and of this flavor's.
  const bool cache_off =
      rmashim_test::EnvInt("RMASHIM_SEGMENT_CACHE_MIB", 1) == 0;
  int node_ranks = 0;
  for (bool local : rmashim_test::NodeLocalRanks()) node_ranks += local;
  int cached = cache_off ? 0 : -1;  // as after the first cycle
  Usage baseline;
  int bad = 0, unmanaged = 0, leftover_cycles = 0;
  for (int cycle = 1; cycle <= kCycles; ++cycle) {
    bool managed = false;
    {
      HangWatchdog watchdog(kCycleWatchdogSeconds, Name(flavor));
      bad += Cycle(flavor, comm, cycle, &managed);
    }
    unmanaged += !managed;
    const int segments = ShmMappings() - shm_before;
    if (cached < 0) {
      cached = segments;
      EXPECT_LE(cached, 2 * node_ranks) << "segments cached after cycle 1";
    }
    if (segments > cached) {
      ++leftover_cycles;
      if (leftover_cycles <= 3) {
        ADD_FAILURE() << segments << " /dev/shm mappings left after cycle "
                      << cycle << ", " << cached << " after the first";
      }
    }
    if (cycle == kBaselineCycle) baseline = CurrentUsage();
  }
  const Usage last = CurrentUsage();
  MPI_Barrier(MPI_COMM_WORLD);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (Rank() == 0) {
    std::fprintf(stderr,
                 "%s: %d cycles in %.1f s; after cycle %d / %d: %s %ld / %ld "
                 "KiB, fds %ld / %ld, maps %ld / %ld\n",
                 Name(flavor), kCycles, seconds, kBaselineCycle, kCycles,
                 kMemoryName, baseline.memory_kib, last.memory_kib,
                 baseline.fds, last.fds, baseline.maps, last.maps);
  }
  EXPECT_EQ(bad, 0) << "wrong values";
  EXPECT_EQ(leftover_cycles, 0) << "cycles that left /dev/shm mapped";
  // The shim manages every flavor but dynamic windows, which pass through.
  EXPECT_EQ(unmanaged, flavor == Flavor::kDynamic ? kCycles : 0);
  ASSERT_GT(baseline.memory_kib, 0);
  ASSERT_GT(baseline.fds, 0);
  ASSERT_GT(baseline.maps, 0);
  EXPECT_LE(last.memory_kib, baseline.memory_kib + kMemorySlackKiB)
      << kMemoryName << " grew";
  EXPECT_LE(last.fds, baseline.fds + kFdSlack) << "descriptors leaked";
  if (MapsMeasureLeaks()) {
    EXPECT_LE(last.maps, baseline.maps + kMapsSlack) << "mappings leaked";
  }
}

TEST(WindowChurnTest, Allocate) { Churn(Flavor::kAllocate); }
TEST(WindowChurnTest, AllocateShared) { Churn(Flavor::kShared); }
TEST(WindowChurnTest, Create) { Churn(Flavor::kCreate); }
TEST(WindowChurnTest, CreateDynamic) { Churn(Flavor::kDynamic); }

}  // namespace
