// HasLargeCountCalls (large_count_calls.h): whether the MPI library the
// process runs with has MPI-4's large-count functions.
#include "shim/base/large_count_calls.h"

#include <cstdlib>
#include <cstring>

namespace rmashim {
namespace {

bool Decide() {
  const char* hide = std::getenv("RMASHIM_TEST_WITHOUT_MPI4");
  if (hide != nullptr && std::strcmp(hide, "1") == 0) return false;
  // Every one or none: MPI-4 added them together.
  return &PMPI_Put_c != nullptr && &PMPI_Get_c != nullptr &&
         &PMPI_Rput_c != nullptr && &PMPI_Rget_c != nullptr &&
         &PMPI_Accumulate_c != nullptr && &PMPI_Raccumulate_c != nullptr &&
         &PMPI_Get_accumulate_c != nullptr &&
         &PMPI_Rget_accumulate_c != nullptr && &PMPI_Pack_c != nullptr &&
         &PMPI_Unpack_c != nullptr && &PMPI_Pack_size_c != nullptr;
}

}  // namespace

bool HasLargeCountCalls() {
  static const bool has = Decide();
  return has;
}

}  // namespace rmashim
