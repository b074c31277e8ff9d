// The cases of the datatype suite (shim_datatype_test.cc): for each, the
// datatype on the origin side and on the target side (predefined, vector,
// hvector, indexed, struct, resized, subarray, nested), and the local
// pack/unpack model every window is held to. Kept apart from the suite's
// windows and epochs so that adding a case touches only this file.
#ifndef RMASHIM_TESTS_SHIM_DATATYPE_CASES_H_
#define RMASHIM_TESTS_SHIM_DATATYPE_CASES_H_

#include <mpi.h>

#include <cstddef>
#include <utility>
#include <vector>

namespace rmashim_test::datatype {

// One side of an access: `count` elements of `type`, starting `offset` bytes
// into the buffer (or into the origin's region of the target window).
struct Side {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int count = 0;
  MPI_Aint offset = 0;
};

struct Case {
  const char* name;
  Side (*origin)();
  Side (*target)();
};

// Every case, kNumCases of them.
extern const Case kCases[];
extern const int kNumCases;

// Frees `type` unless it is predefined.
void FreeType(MPI_Datatype type);

// The cases' datatypes, built once per test and freed at its end.
struct CaseTypes {
  std::vector<Side> origin, target;
  CaseTypes();
  ~CaseTypes();
};

// Copies `src` (laid out as `from`) into `dst` (laid out as `to`) the way
// MPI moves RMA data: pack the source in type-map order, unpack into the
// destination.
void ModelCopy(const std::byte* src, const Side& from, std::byte* dst,
               const Side& to);

// [lo, hi) bytes touched by `side`, relative to its buffer.
std::pair<MPI_Aint, MPI_Aint> Span(const Side& side);

}  // namespace rmashim_test::datatype

#endif  // RMASHIM_TESTS_SHIM_DATATYPE_CASES_H_
