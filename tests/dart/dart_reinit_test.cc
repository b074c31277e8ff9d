// The program owns MPI and starts and stops DART many times, as DASH's test
// suite does (dash::init / dash::finalize around every test): each round
// uses team memory with strided and indexed types (the core's packing),
// registered memory, a lock, an atomic (through the core's agent, which
// dart_init starts again, where it runs) and a team, and dart_exit leaves
// MPI running.
#include <dart/dart.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "tests/dart/dart_test_util.h"

namespace {

using dart_testing::At;
using dart_testing::MyId;
using dart_testing::Size;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "unit %d: %s:%d: %s\n", MyId(), __FILE__, __LINE__, \
                   #cond);                                                     \
      return false;                                                            \
    }                                                                          \
  } while (0)

bool Round(int round) {
  const int right = (MyId() + 1) % Size();
  const int left = (MyId() + Size() - 1) % Size();
  // Strided put of every other int into the right neighbour's team memory.
  dart_gptr_t g;
  CHECK(dart_team_memalloc_aligned(DART_TEAM_ALL, 8, DART_TYPE_INT, &g) ==
        DART_OK);
  dart_datatype_t strided, indexed;
  CHECK(dart_type_create_strided(DART_TYPE_INT, 2, 1, &strided) == DART_OK);
  const size_t lens[2] = {1, 2}, offs[2] = {0, 3};
  CHECK(dart_type_create_indexed(DART_TYPE_INT, 2, lens, offs, &indexed) ==
        DART_OK);
  const int four[4] = {round, MyId(), 7, 9};
  CHECK(dart_put_blocking(At(g, right), four, 4, DART_TYPE_INT, strided) ==
        DART_OK);
  dart_barrier(DART_TEAM_ALL);
  int got[3] = {-1, -1, -1};
  CHECK(dart_get_blocking(got, At(g, MyId()), 3, indexed, DART_TYPE_INT) ==
        DART_OK);
  // Elements 0, 3, 4 of [round, ?, left, ?, 7, ?, 9, ?]; 3 was not written.
  CHECK(got[0] == round && got[2] == 7);
  int second = -1;
  CHECK(dart_get_blocking(&second, At(g, MyId(), 8), 1, DART_TYPE_INT,
                          DART_TYPE_INT) == DART_OK);
  CHECK(second == left);
  dart_barrier(DART_TEAM_ALL);
  // Every unit adds one to unit 0's element 7: with RMASHIM_AGENT=1 on a
  // layout spanning nodes through the agent dart_init started again.
  bool running = false;
  const int64_t applied = dart_testing::AgentAppliedEverywhere(&running);
  CHECK(running == dart_testing::AgentExpected());
  int* counter = nullptr;  // unit 0's element 7, on unit 0
  if (MyId() == 0) {
    CHECK(dart_gptr_getaddr(At(g, 0, 28), reinterpret_cast<void**>(&counter)) ==
          DART_OK);
    *counter = 0;
  }
  dart_barrier(DART_TEAM_ALL);
  const int one = 1;
  int old = -1;
  CHECK(dart_fetch_and_op(At(g, 0, 28), &one, &old, DART_TYPE_INT,
                          DART_OP_SUM) == DART_OK);
  CHECK(old >= 0 && old < Size());
  dart_barrier(DART_TEAM_ALL);
  CHECK(MyId() != 0 || *counter == Size());
  // Unit 0's agent applied one per unit on another node.
  const std::vector<bool> local = dart_testing::NodeLocalUnits();
  int remote_from_0 = 0;
  if (MyId() == 0) {
    remote_from_0 =
        static_cast<int>(std::count(local.begin(), local.end(), false));
  }
  MPI_Bcast(&remote_from_0, 1, MPI_INT, 0, MPI_COMM_WORLD);
  CHECK(dart_testing::AgentAppliedEverywhere() - applied ==
        (running ? remote_from_0 : 0));
  dart_barrier(DART_TEAM_ALL);
  CHECK(dart_type_destroy(&strided) == DART_OK);
  CHECK(dart_type_destroy(&indexed) == DART_OK);
  CHECK(dart_team_memfree(g) == DART_OK);
  // Registered memory and a lock on a new team.
  dart_team_t team;
  CHECK(dart_team_clone(DART_TEAM_ALL, &team) == DART_OK);
  std::vector<int> mem(4, MyId());
  dart_gptr_t r;
  CHECK(dart_team_memregister(team, mem.size(), DART_TYPE_INT, mem.data(),
                              &r) == DART_OK);
  int v = -1;
  CHECK(dart_get_blocking(&v, At(r, right), 1, DART_TYPE_INT, DART_TYPE_INT) ==
        DART_OK);
  CHECK(v == right);
  dart_lock_t lock;
  CHECK(dart_team_lock_init(team, &lock) == DART_OK);
  CHECK(dart_lock_acquire(lock) == DART_OK);
  CHECK(dart_lock_release(lock) == DART_OK);
  dart_barrier(team);
  CHECK(dart_team_memderegister(r) == DART_OK);
  CHECK(dart_team_lock_destroy(&lock) == DART_OK);
  dart_domain_locality_t* root = nullptr;
  CHECK(dart_domain_team_locality(team, ".", &root) == DART_OK);
  CHECK(root->num_units == Size());
  CHECK(dart_team_destroy(&team) == DART_OK);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int ok = 1;
  for (int round = 0; round < 4 && ok; ++round) {
    dart_thread_support_level_t level;
    if (dart_init_thread(&argc, &argv, &level) != DART_OK) return 1;
    ok = Round(round) ? 1 : 0;
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    ok = all;
    if (dart_exit() != DART_OK) return 1;
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (finalized) return 1;  // the program owns MPI
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
