// Datatype layouts for copying RMA data straight into or out of mapped
// target memory.
#ifndef RMASHIM_SHIM_TYPES_DATATYPE_H_
#define RMASHIM_SHIM_TYPES_DATATYPE_H_

#include <mpi.h>

#include <cstdint>

#include "shim/base/mpich_abi.h"

namespace rmashim {

// What `count` elements of a datatype occupy.
struct Layout {
  MPI_Aint bytes = 0;  // payload bytes (type size times count)
  MPI_Aint lo = 0;     // lowest byte touched, relative to the buffer
  MPI_Aint hi = 0;     // one past the highest byte touched
  bool dense = false;  // payload is exactly bytes [lo, hi) in order
};

// The communicator MPI_Pack/Unpack and type checks use: a private duplicate
// of MPI_COMM_SELF with MPI_ERRORS_RETURN, so a bad datatype is reported to
// the caller instead of aborting through MPI_COMM_SELF's handler. Made on
// first use (a derived datatype), so a program that moves only predefined
// types spends no MPICH context id on it. StopDatatypeSupport, before
// MPI_Finalize, frees it.
MPI_Comm PackComm();
void StopDatatypeSupport();

// MPI_Pack / MPI_Unpack of `count` x `type` at `buf` to / from `bytes`
// contiguous bytes, with large counts. `buf` may be MPI_BOTTOM (NULL) with a
// type of absolute addresses (MPI_Get_address), which MPICH's own
// MPI_Pack/Unpack reject ("Null pointer in parameter inbuf").
int PackBytes(const void* buf, int count, MPI_Datatype type, void* out,
              MPI_Aint bytes);
int UnpackBytes(const void* in, MPI_Aint bytes, void* buf, int count,
                MPI_Datatype type);

// Fills `out` for `count` elements of `type`; returns an MPI error code
// (MPI_ERR_COUNT, MPI_ERR_TYPE: also for an uncommitted derived type) for
// bad input.
int DescribeLayout(MPI_Count count, MPI_Datatype type, Layout* out);

// MPI_ERR_BUFFER for a NULL buffer holding data of a predefined type (a
// derived type may address absolute memory from MPI_BOTTOM, which is NULL).
inline int CheckBuffer(const void* buf, MPI_Datatype type, const Layout& l) {
  return buf == nullptr && l.bytes > 0 && IsBuiltinType(type) ? MPI_ERR_BUFFER
                                                              : MPI_SUCCESS;
}

// Fast path of DescribeLayout for predefined types; false when `type` needs
// the general path.
inline bool DescribeBuiltin(int count, MPI_Datatype type, Layout* out) {
  if (!IsBuiltinType(type) || count < 0) return false;
  const int size = BuiltinTypeSize(type);
  if (size == 0) return false;
  out->bytes = static_cast<MPI_Aint>(count) * size;
  out->lo = 0;
  out->hi = out->bytes;
  out->dense = true;
  return true;
}

// Copies `src_count` elements laid out as `src_type` at `src` into
// `dst_count` elements laid out as `dst_type` at `dst`. Both layouts must
// carry the same number of bytes. Returns an MPI error code.
int CopyTyped(const void* src, int src_count, MPI_Datatype src_type,
              const Layout& src_layout, void* dst, int dst_count,
              MPI_Datatype dst_type, const Layout& dst_layout);

}  // namespace rmashim

#endif  // RMASHIM_SHIM_TYPES_DATATYPE_H_
