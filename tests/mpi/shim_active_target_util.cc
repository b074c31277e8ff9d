// The group and the iteration count of shim_active_target_util.h.
#include "tests/mpi/shim_active_target_util.h"

#include <set>

#include "tests/mpi_test_util.h"

namespace rmashim_test::active_target {

int Iterations(int single_node, int split) {
  return AllOnOneNode(MPI_COMM_WORLD) ? single_node : split;
}

Group::Group(MPI_Comm comm, const std::vector<int>& ranks) {
  const std::set<int> unique(ranks.begin(), ranks.end());
  const std::vector<int> sorted(unique.begin(), unique.end());
  MPI_Group all;
  MPI_Comm_group(comm, &all);
  MPI_Group_incl(all, static_cast<int>(sorted.size()), sorted.data(), &group_);
  MPI_Group_free(&all);
}

Group::~Group() { MPI_Group_free(&group_); }

}  // namespace rmashim_test::active_target
