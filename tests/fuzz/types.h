// Derived datatypes for the fuzzer, built from one predefined element type
// (what MPI requires of accumulate types). Each node keeps its own model of
// the type map in element slots (one slot = the element's extent), checked
// against MPI's size and true extent when built, so the generator knows
// exactly which target elements an operation touches.
#ifndef RMASHIM_TESTS_FUZZ_TYPES_H_
#define RMASHIM_TESTS_FUZZ_TYPES_H_

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/fuzz/rng.h"

namespace rma_fuzz {

struct TypeNode {
  enum class Kind {
    kNamed,
    kContiguous,
    kVector,
    kHvector,
    kIndexed,
    kHindexed,
    kIndexedBlock,
    kHindexedBlock,
    kStruct,
    kResized,
    kSubarray,
  };
  Kind kind = Kind::kNamed;
  int elem = 0;  // index into ElemTypes()
  int count = 0;
  int blocklen = 0;
  long stride = 0;  // vector: child extents; hvector: slots
  std::vector<int> blocklens;
  std::vector<long> displs;  // indexed*: child extents; h*, struct: slots
  long resized_lb = 0, resized_extent = 0;  // slots
  std::vector<int> sizes, subsizes, starts;
  bool order_c = true;
  std::shared_ptr<TypeNode> child;

  // Filled by Build().
  MPI_Datatype mpi = MPI_DATATYPE_NULL;
  std::vector<long> map;    // element slots in type-map order
  long lb = 0, extent = 1;  // slots

  ~TypeNode();
};
using TypeRef = std::shared_ptr<TypeNode>;

// A named element type node.
TypeRef NamedType(int elem);

// A random derived type (or the named type) with exactly `elements`
// elements whose type map spans at most `max_span` slots. `depth` limits
// nesting. Built and committed; nullptr when no attempt fits.
TypeRef RandomType(int elem, int elements, long max_span, int depth, Rng& rng);

// Slots touched by `count` copies of `t` (type-map order), relative to the
// buffer start.
std::vector<long> Footprint(const TypeNode& t, int count);

// Whether `slots` has no slot twice (required wherever data is written).
bool Distinct(std::vector<long> slots);

// "vector(2,3,-4) of MPI_INT"-style description.
std::string Describe(const TypeNode& t);

}  // namespace rma_fuzz

#endif  // RMASHIM_TESTS_FUZZ_TYPES_H_
