// What the active-target suites (shim_active_target_halo_test.cc,
// shim_active_target_epoch_test.cc) share: fewer iterations where MPI runs
// the epochs, and MPI groups freed at scope exit.
#ifndef RMASHIM_TESTS_SHIM_ACTIVE_TARGET_UTIL_H_
#define RMASHIM_TESTS_SHIM_ACTIVE_TARGET_UTIL_H_

#include <mpi.h>

#include <vector>

namespace rmashim_test::active_target {

// `single_node` when every rank shares one node, else `split`: fence and
// PSCW epochs on windows spanning (simulated) nodes are MPI's, and slow when
// ranks are oversubscribed.
int Iterations(int single_node, int split);

// A group of `comm`'s ranks (duplicates dropped), freed at scope exit.
class Group {
 public:
  Group(MPI_Comm comm, const std::vector<int>& ranks);
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  MPI_Group get() const { return group_; }

 private:
  MPI_Group group_ = MPI_GROUP_NULL;
};

}  // namespace rmashim_test::active_target

#endif  // RMASHIM_TESTS_SHIM_ACTIVE_TARGET_UTIL_H_
