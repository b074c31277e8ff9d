// The predefined datatypes the fuzzer puts in windows, what MPI lets each
// of them do (MPI-3.1 5.9.2, 11.3.4), and value generation that keeps every
// legal outcome deterministic.
#ifndef RMASHIM_TESTS_FUZZ_ELEMENTS_H_
#define RMASHIM_TESTS_FUZZ_ELEMENTS_H_

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "tests/fuzz/rng.h"

namespace rma_fuzz {

// Type groups of MPI-3.1 5.9.2 (multi-language types count as Fortran
// integers: the same ops apply).
enum Group : unsigned {
  kCInt = 1,
  kFInt = 2,
  kFloat = 4,
  kLogical = 8,
  kComplex = 16,
  kByte = 32,
  kPair = 64,
};

// How an element's bytes are made and which of them carry a value.
enum class Repr {
  kInt,
  kUint,
  kFloat,
  kDouble,
  kLongDouble,
  kBool,     // one byte, 0 or 1
  kLogical,  // Fortran LOGICAL (int): 0 or 1
  kByte,
  kComplexF,
  kComplexD,
  kPairFloat,
  kPairDouble,
  kPairLong,
  kPairInt,
  kPairShort,
  kPairLongDouble,
};

struct ElemType {
  const char* name;
  MPI_Datatype type;
  int extent;  // bytes in memory
  Repr repr;
  unsigned group;
  int weight;  // how often the generator picks it
};

const std::vector<ElemType>& ElemTypes();
inline const ElemType& Elem(int i) { return ElemTypes()[i]; }

// What origin values are for: operands of MPI_PROD stay powers of two for
// floating point (so products are exact in any order), everything else is a
// small quarter-integer or an arbitrary integer.
enum class Values { kAny, kProd };

// Writes one element's bytes. Padding bytes get a fixed pattern.
void MakeValue(const ElemType& e, Values v, Rng& rng, std::byte* out);

// Zeroes the bytes of one element that carry no value (long double and
// pair padding), which MPI implementations may write arbitrarily.
void MaskPadding(const ElemType& e, std::byte* p);

// Accumulate ops MPI defines for the type. `concurrent`: several origins
// may apply them to one location in one epoch, so only ops whose result does
// not depend on the order qualify (no MPI_REPLACE, no rounding).
std::vector<MPI_Op> AccumulateOps(const ElemType& e, bool concurrent);

// Whether MPI_Compare_and_swap takes the type.
bool CompareSwapOk(const ElemType& e);

// Whether MPI_SUM with an equal increment from every origin gives the same
// multiset of fetched values in any order (exact arithmetic).
bool TicketOk(const ElemType& e);

// Integer types for read-modify-write counters under exclusive locks.
bool CounterOk(const ElemType& e);
// target += delta (wrapping for integers), for counters.
void AddDelta(const ElemType& e, std::byte* value, int delta);

const char* OpName(MPI_Op op);

}  // namespace rma_fuzz

#endif  // RMASHIM_TESTS_FUZZ_ELEMENTS_H_
