// Many windows alive at once: 200 windows of mixed flavors (or thousands,
// or thousands of one flavor: STRESS_WINDOWS, STRESS_FLAVOR), each written
// by every other rank and verified by its owner and through MPI_Get, then
// freed in an order unrelated to the creation order. Thousands must fit: a
// managed window costs MPICH one context id, as a native one does (MPICH
// 4.0.2 has 2048; natively about 2044 MPI_Win_allocate windows fit).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::HangWatchdog;
using rmashim_test::IsManaged;
using rmashim_test::Rank;
using rmashim_test::ScopedComm;
using rmashim_test::Size;
using rmashim_test::SplitNodeComm;

// 200 windows unless STRESS_WINDOWS says otherwise (runs with more ranks
// than cores use fewer: each creation then costs up to a second).
const int kWindows = rmashim_test::EnvInt("STRESS_WINDOWS", 200);
constexpr double kWatchdogSeconds = 400.0;

enum class Flavor { kAllocate, kShared, kCreate, kDynamic };

// STRESS_FLAVOR=0..3 makes every window of that flavor; else they rotate.
Flavor FlavorOf(int window) {
  const int only = rmashim_test::EnvInt("STRESS_FLAVOR", -1);
  return static_cast<Flavor>(only >= 0 ? only : window % 4);
}

struct Window {
  Flavor flavor;
  MPI_Comm comm;  // MPI_COMM_WORLD, or the node for allocate_shared
  MPI_Win win = MPI_WIN_NULL;
  int64_t* mem = nullptr;         // one slot per rank of `comm`
  std::vector<int64_t> own;       // memory of create / dynamic windows
  std::vector<MPI_Aint> address;  // dynamic: every rank's `own`
};

int64_t Stamp(int origin, int window) {
  return int64_t{origin + 1} * 1000003 + window;
}

TEST(ManyWindowsTest, MixedWindowsAliveAtOnce) {
  // Several of each flavor, and a count coprime to 37 (the free order).
  ASSERT_GE(kWindows, 16);
  ASSERT_NE(kWindows % 37, 0);
  HangWatchdog watchdog(kWatchdogSeconds, "many windows");
  ScopedComm node(SplitNodeComm());
  std::vector<Window> windows(kWindows);
  int managed = 0, unmanaged_expected = 0;
  for (int i = 0; i < kWindows; ++i) {
    Window& w = windows[i];
    w.flavor = FlavorOf(i);
    w.comm = w.flavor == Flavor::kShared ? node.get() : MPI_COMM_WORLD;
    int n = 0, me = 0;
    MPI_Comm_size(w.comm, &n);
    MPI_Comm_rank(w.comm, &me);
    // Sizes vary a little so segments differ.
    const int slots = n + i % 5;
    const MPI_Aint bytes = slots * sizeof(int64_t);
    switch (w.flavor) {
      case Flavor::kAllocate:
        ASSERT_EQ(MPI_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL,
                                   w.comm, &w.mem, &w.win),
                  MPI_SUCCESS);
        break;
      case Flavor::kShared:
        ASSERT_EQ(MPI_Win_allocate_shared(bytes, sizeof(int64_t), MPI_INFO_NULL,
                                          w.comm, &w.mem, &w.win),
                  MPI_SUCCESS);
        break;
      case Flavor::kCreate:
        w.own.assign(slots, -1);
        w.mem = w.own.data();
        ASSERT_EQ(MPI_Win_create(w.mem, bytes, sizeof(int64_t), MPI_INFO_NULL,
                                 w.comm, &w.win),
                  MPI_SUCCESS);
        break;
      case Flavor::kDynamic: {
        w.own.assign(slots, -1);
        w.mem = w.own.data();
        ASSERT_EQ(MPI_Win_create_dynamic(MPI_INFO_NULL, w.comm, &w.win),
                  MPI_SUCCESS);
        ASSERT_EQ(MPI_Win_attach(w.win, w.mem, bytes), MPI_SUCCESS);
        MPI_Aint mine = 0;
        MPI_Get_address(w.mem, &mine);
        w.address.resize(n);
        MPI_Allgather(&mine, 1, MPI_AINT, w.address.data(), 1, MPI_AINT,
                      w.comm);
        break;
      }
    }
    managed += IsManaged(w.win);
    unmanaged_expected += w.flavor == Flavor::kDynamic;
    for (int s = 0; s < slots; ++s) w.mem[s] = -1;
  }
  // Every flavor but dynamic is managed.
  EXPECT_EQ(managed, kWindows - unmanaged_expected);
  MPI_Barrier(MPI_COMM_WORLD);  // all memory initialized

  // Every rank writes its stamp into its slot of every other rank's memory
  // in every window, and reads it back.
  int bad_reads = 0;
  for (int i = 0; i < kWindows; ++i) {
    Window& w = windows[i];
    int n = 0, me = 0;
    MPI_Comm_size(w.comm, &n);
    MPI_Comm_rank(w.comm, &me);
    const int64_t stamp = Stamp(Rank(), i);
    ASSERT_EQ(MPI_Win_lock_all(0, w.win), MPI_SUCCESS);
    for (int t = 0; t < n; ++t) {
      if (t == me) continue;
      const MPI_Aint disp =
          w.flavor == Flavor::kDynamic
              ? MPI_Aint_add(w.address[t], me * sizeof(int64_t))
              : me;
      ASSERT_EQ(MPI_Put(&stamp, 1, MPI_INT64_T, t, disp, 1, MPI_INT64_T, w.win),
                MPI_SUCCESS);
    }
    ASSERT_EQ(MPI_Win_flush_all(w.win), MPI_SUCCESS);
    std::vector<int64_t> back(n, -7);
    for (int t = 0; t < n; ++t) {
      if (t == me) continue;
      const MPI_Aint disp =
          w.flavor == Flavor::kDynamic
              ? MPI_Aint_add(w.address[t], me * sizeof(int64_t))
              : me;
      ASSERT_EQ(
          MPI_Get(&back[t], 1, MPI_INT64_T, t, disp, 1, MPI_INT64_T, w.win),
          MPI_SUCCESS);
    }
    ASSERT_EQ(MPI_Win_unlock_all(w.win), MPI_SUCCESS);
    for (int t = 0; t < n; ++t) bad_reads += t != me && back[t] != stamp;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(bad_reads, 0) << "a get did not return what the put wrote";

  // Each owner checks its memory: the stamps of the other ranks of the
  // window's communicator, in their slots, and nothing else.
  std::vector<int> world_of_node(Size());
  int node_size = 0;
  MPI_Comm_size(node.get(), &node_size);
  const int world_rank = Rank();
  MPI_Allgather(&world_rank, 1, MPI_INT, world_of_node.data(), 1, MPI_INT,
                node.get());
  int bad = 0;
  for (int i = 0; i < kWindows; ++i) {
    const Window& w = windows[i];
    int n = 0, me = 0;
    MPI_Comm_size(w.comm, &n);
    MPI_Comm_rank(w.comm, &me);
    const int slots = n + i % 5;
    for (int s = 0; s < slots; ++s) {
      const int world =
          s >= n ? -1 : (w.comm == MPI_COMM_WORLD ? s : world_of_node[s]);
      const int64_t want = s >= n || s == me ? -1 : Stamp(world, i);
      if (w.mem[s] != want) {
        if (++bad <= 5) {
          ADD_FAILURE() << "window " << i << " slot " << s << ": " << w.mem[s]
                        << ", want " << want;
        }
      }
    }
  }
  EXPECT_EQ(bad, 0);
  MPI_Barrier(MPI_COMM_WORLD);  // nobody reads memory that is freed below

  // Free in an order unrelated to creation: k -> 37 k + 11 mod kWindows is
  // a permutation (37 is prime and does not divide kWindows); the same on
  // every rank, since freeing is collective.
  std::vector<bool> freed(kWindows, false);
  for (int k = 0; k < kWindows; ++k) {
    const int i = (37 * k + 11) % kWindows;
    ASSERT_FALSE(freed[i]);
    freed[i] = true;
    Window& w = windows[i];
    if (w.flavor == Flavor::kDynamic) {
      ASSERT_EQ(MPI_Win_detach(w.win, w.mem), MPI_SUCCESS);
    }
    ASSERT_EQ(MPI_Win_free(&w.win), MPI_SUCCESS);
    EXPECT_EQ(w.win, MPI_WIN_NULL);
  }
  // Windows created afterwards work (table slots and resources came back).
  int64_t* mem = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  ASSERT_EQ(MPI_Win_allocate(Size() * sizeof(int64_t), sizeof(int64_t),
                             MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win),
            MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(win));
  mem[Rank()] = -1;
  MPI_Barrier(MPI_COMM_WORLD);
  const int right = (Rank() + 1) % Size(),
            left = (Rank() + Size() - 1) % Size();
  const int64_t stamp = Stamp(Rank(), kWindows);
  MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
  MPI_Put(&stamp, 1, MPI_INT64_T, right, Rank(), 1, MPI_INT64_T, win);
  MPI_Win_unlock(right, win);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(mem[left], Stamp(left, kWindows));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
}

}  // namespace
