// Flattens a datatype built from one predefined type into runs of
// consecutive elements, so element-wise operations (accumulates) can work on
// mapped target memory directly.
#ifndef RMASHIM_SHIM_TYPES_FLATTEN_H_
#define RMASHIM_SHIM_TYPES_FLATTEN_H_

#include <mpi.h>

#include <vector>

namespace rmashim {

struct ElementRun {
  MPI_Aint offset;  // bytes from the buffer start
  MPI_Aint count;   // consecutive elements of the predefined type
};

struct FlatType {
  MPI_Datatype element = MPI_DATATYPE_NULL;  // the predefined type
  MPI_Aint element_extent = 0;
  MPI_Aint elements = 0;         // total over all runs
  std::vector<ElementRun> runs;  // in type-map order
};

// Returned by Flatten for a valid type built with a constructor it does not
// handle (none of MPI-3's; kept for types a later MPI may add): the caller
// hands the operation to MPI.
inline constexpr int kNotFlattened = -1;

// Flattens `count` elements of `type`. MPI_ERR_TYPE when the type mixes
// predefined types; kNotFlattened for constructors not handled here.
int Flatten(MPI_Datatype type, int count, FlatType* out);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_TYPES_FLATTEN_H_
