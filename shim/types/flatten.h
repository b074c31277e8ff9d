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

// What Flatten made of a type: flattened (`*out` filled), bad input (an
// MPI error class), or a valid type it does not handle.
struct [[nodiscard]] FlattenResult {
  int rc = MPI_SUCCESS;  // MPI_ERR_TYPE, MPI_ERR_COUNT for bad input
  // A valid type built with a constructor not handled here (a darray this
  // process's rank holds no part of in a shape it cannot express, or one a
  // later MPI may add): the caller hands the operation to MPI.
  bool unhandled = false;

  bool flattened() const { return rc == MPI_SUCCESS && !unhandled; }
};

// Flattens `count` elements of `type` into `*out`. MPI_ERR_TYPE when the
// type mixes predefined types.
FlattenResult Flatten(MPI_Datatype type, int count, FlatType* out);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_TYPES_FLATTEN_H_
