// Everything the shim reads out of MPICH's handle encoding, in one place
// (MPICH 4.0.2, mpir_objects.h / mpir_datatype.h; the MPI standard leaves
// handles opaque). Hot paths use these to classify predefined datatypes and
// ops without an MPI call; porting to another MPI means replacing this file.
//
// A handle is 32 bits: kind in bits 30-31 (1 = builtin, 2 = direct, 0 =
// invalid), object type in bits 26-29, then the index. Builtin datatypes
// carry their size in bits 8-15 and a per-type index in bits 0-7; predefined
// ops and the pair datatypes (MPI_FLOAT_INT ...) are direct handles with
// their index in bits 0-7.
#ifndef RMASHIM_SHIM_BASE_MPICH_ABI_H_
#define RMASHIM_SHIM_BASE_MPICH_ABI_H_

#include <mpi.h>

#include <cstdint>

namespace rmashim {

// MPICH's handles are ints (MPI_Datatype, MPI_Op and MPI_Request alike).
template <typename Handle>
uint32_t HandleBits(Handle h) {
  return static_cast<uint32_t>(h);
}

// Builtin (predefined, non-pair) datatypes.
inline bool IsBuiltinType(MPI_Datatype type) {
  return (HandleBits(type) & 0xfc000000u) == 0x4c000000u;
}
inline int BuiltinTypeSize(MPI_Datatype type) {
  return (HandleBits(type) >> 8) & 0xff;
}
inline int BuiltinTypeIndex(MPI_Datatype type) {
  return HandleBits(type) & 0xff;
}

// The predefined 8-byte integer types (MPI_LONG, MPI_UNSIGNED_LONG,
// MPI_LONG_LONG_INT, MPI_UNSIGNED_LONG_LONG, MPI_INTEGER8, MPI_INT64_T,
// MPI_UINT64_T, MPI_AINT, MPI_OFFSET, MPI_COUNT): builtin handles of size
// 8 whose index is in this set. The word lane (word_lane.h) serves them
// with inline CPU atomics; element_ops_test checks the set against the
// element tables.
inline bool IsWordIntegerType(MPI_Datatype type) {
  const uint32_t h = HandleBits(type);
  constexpr uint64_t kLow = (uint64_t{1} << 0x07) | (uint64_t{1} << 0x08) |
                            (uint64_t{1} << 0x09) | (uint64_t{1} << 0x19) |
                            (uint64_t{1} << 0x31) | (uint64_t{1} << 0x3a) |
                            (uint64_t{1} << 0x3e);
  constexpr uint64_t kHigh = (uint64_t{1} << (0x43 - 64)) |
                             (uint64_t{1} << (0x44 - 64)) |
                             (uint64_t{1} << (0x45 - 64));
  if ((h & 0xffffff80u) != 0x4c000800u) return false;  // builtin, 8 bytes
  const uint32_t index = h & 0x7f;
  return (((index < 64 ? kLow : kHigh) >> (index & 63)) & 1) != 0;
}

// The pair types MPI_FLOAT_INT ... MPI_LONG_DOUBLE_INT: 0..4, else -1.
inline int PairTypeIndex(MPI_Datatype type) {
  const uint32_t h = HandleBits(type);
  return (h & 0xffffff00u) == 0x8c000000u && (h & 0xff) < 5
             ? static_cast<int>(h & 0xff)
             : -1;
}

// Predefined ops: MPI_MAX = 1 ... MPI_NO_OP = 14 in the low byte.
constexpr int kPredefinedOps = 15;  // indices 0..14 (0 unused)
inline int OpIndex(MPI_Op op) {
  return static_cast<int>(HandleBits(op) & 0xff);
}
inline bool IsPredefinedOp(MPI_Op op) {
  return (HandleBits(op) & 0xffffff00u) == 0x58000000u && OpIndex(op) >= 1 &&
         OpIndex(op) <= 14;
}

// A request handle MPICH never issues (kind "invalid", index 1): the shim's
// "completed at issue" request.
inline const MPI_Request kCompletedRequest =
    static_cast<MPI_Request>(0x2c000001);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_BASE_MPICH_ABI_H_
