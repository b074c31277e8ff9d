// Small helpers shared by the MPI test suites.
#ifndef RMASHIM_TESTS_MPI_TEST_UTIL_H_
#define RMASHIM_TESTS_MPI_TEST_UTIL_H_

#include <dlfcn.h>
#include <mpi.h>

namespace rmashim_test {

inline int Rank(MPI_Comm comm = MPI_COMM_WORLD) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

inline int Size(MPI_Comm comm = MPI_COMM_WORLD) {
  int s = 0;
  MPI_Comm_size(comm, &s);
  return s;
}

// Whether librmashim.so is preloaded and manages `win`.
inline bool IsManaged(MPI_Win win) {
  using Fn = int (*)(MPI_Win, int*);
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_win_is_managed"));
  int flag = 0;
  return fn != nullptr && fn(win, &flag) == MPI_SUCCESS && flag != 0;
}

// Whether world rank `other` shares this rank's node (honours MPICH's
// simulated cliques).
inline bool SameNode(int other) {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  MPI_Group world_group, node_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Comm_group(node, &node_group);
  int translated = MPI_UNDEFINED;
  MPI_Group_translate_ranks(world_group, 1, &other, node_group, &translated);
  MPI_Group_free(&world_group);
  MPI_Group_free(&node_group);
  MPI_Comm_free(&node);
  return translated != MPI_UNDEFINED;
}

}  // namespace rmashim_test

#endif  // RMASHIM_TESTS_MPI_TEST_UTIL_H_
