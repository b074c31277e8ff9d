// Element-wise MPI reduction operations on predefined datatypes, in two
// flavours: lock-free CPU atomics per element (for concurrent accumulates)
// and plain loops (for exclusive access). Used by the accumulate family of
// the shim and by DART's atomics.
#ifndef RMASHIM_SHIM_TYPES_ELEMENT_OPS_H_
#define RMASHIM_SHIM_TYPES_ELEMENT_OPS_H_

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include "shim/base/mpich_abi.h"

namespace rmashim {

// Combines n elements: target[i] = target[i] op origin[i], storing the old
// target value into result[i] when result is not null. Target elements are
// `extent` apart in memory; origin and result are packed (`size` apart, as
// MPI_Pack lays them out).
using ElementFn = void (*)(std::byte* target, const std::byte* origin,
                           std::byte* result, size_t n);

struct ElementOp {
  ElementFn atomic = nullptr;  // lock-free; nullptr when the type is too wide
  ElementFn plain = nullptr;   // caller guarantees exclusive access
  uint16_t size = 0;           // packed bytes per element
  uint16_t extent = 0;         // bytes per element in memory
  uint16_t align = 1;          // alignment the atomic flavour needs
};

// Whether `p` meets an atomic flavour's `align` (a power of two): a mask,
// not a division (a 64-bit divide costs more than the atomic it guards).
inline bool IsAligned(const void* p, uint16_t align) {
  return (reinterpret_cast<uintptr_t>(p) & (align - 1u)) == 0;
}

// The implementation of `op` on predefined `type`: MPI_ERR_TYPE when `type`
// is not predefined, MPI_ERR_OP when MPI does not define `op` for it.
int FindElementOp(MPI_Datatype type, MPI_Op op, const ElementOp** out);

// Whether `type` is a predefined datatype (named, including pair types).
bool IsPredefinedType(MPI_Datatype type);

// The vectors the plain loops use: "avx2" where the CPU has it, else (or
// with RMASHIM_SIMD=sse2 in the environment) "sse2".
const char* ElementLoopsIsa();

// Compare-and-swap of one element: if *target == *compare then
// *target = *origin; the old target value goes to *result.
using CompareSwapFn = void (*)(std::byte* target, const std::byte* origin,
                               const std::byte* compare, std::byte* result);

struct CompareSwapOp {
  CompareSwapFn atomic = nullptr;
  CompareSwapFn plain = nullptr;
  uint16_t size = 0;
  uint16_t align = 1;
};

// MPI_ERR_TYPE for types MPI_Compare_and_swap does not allow (floating
// point, complex, pairs, non-predefined).
int FindCompareSwap(MPI_Datatype type, const CompareSwapOp** out);

// The hot paths' lookups for builtin (non-pair) types: one table read, no
// call. nullptr where FindElementOp / FindCompareSwap would fail (or the
// type is a pair type, which they handle).
namespace element_tables {
// [BuiltinTypeIndex][OpIndex]; rows of unknown types are empty.
extern const std::array<ElementOp, kPredefinedOps>* const g_ops;
extern const CompareSwapOp* const* const g_cas;  // [BuiltinTypeIndex]
}  // namespace element_tables

inline const ElementOp* BuiltinElementOp(MPI_Datatype type, MPI_Op op) {
  if (!IsBuiltinType(type) || !IsPredefinedOp(op)) return nullptr;
  const ElementOp& e =
      element_tables::g_ops[BuiltinTypeIndex(type)][OpIndex(op)];
  return e.plain != nullptr ? &e : nullptr;
}

inline const CompareSwapOp* BuiltinCompareSwap(MPI_Datatype type) {
  return IsBuiltinType(type) ? element_tables::g_cas[BuiltinTypeIndex(type)]
                             : nullptr;
}

}  // namespace rmashim

#endif  // RMASHIM_SHIM_TYPES_ELEMENT_OPS_H_
