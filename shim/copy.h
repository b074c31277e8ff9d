// The copy behind every direct put and get. glibc's memcpy moves mid-sized
// blocks (a few KiB up to its non-temporal threshold) with `rep movsb`,
// which on this project's AMD EPYC (Zen 3) VMs runs 10-15x slower than
// plain vector loads and stores when the destination lies just past the
// source modulo a page (16 bytes: a malloc'd buffer against a page-aligned
// window, i.e. every MPI_Get into an ordinary heap buffer): a 32 KiB
// MPI_Get took 17-21 us with memcpy and 0.8 us with vector moves
// (bench/rma_latency, get+flush). Within one process too: memcpy(a + 16, b,
// 32 KiB) with a and b page-aligned takes 10.7 us, and 0.7 us with the
// destination at offset 0, 64, 256 or 2048. So blocks in that range are copied
// with an explicit vector loop; small and huge ones still go to memcpy.
#ifndef RMASHIM_SHIM_COPY_H_
#define RMASHIM_SHIM_COPY_H_

#include <cstddef>
#include <cstring>

namespace rmashim {

// Vector loop from this size up (below it memcpy uses vector moves anyway)
// and up to kVectorCopyMax (from there memcpy's non-temporal stores win).
inline constexpr size_t kVectorCopyMin = 2048;
inline constexpr size_t kVectorCopyMax = size_t{1} << 20;

void VectorCopy(void* dst, const void* src, size_t n);

inline void CopyBytes(void* dst, const void* src, size_t n) {
  if (n < kVectorCopyMin || n >= kVectorCopyMax) {
    std::memcpy(dst, src, n);
  } else {
    VectorCopy(dst, src, n);
  }
}

}  // namespace rmashim

#endif  // RMASHIM_SHIM_COPY_H_
