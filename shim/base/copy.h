// The copy behind every direct put and get. glibc's memcpy moves mid-sized
// blocks (a few KiB up to its non-temporal threshold) with `rep movsb`,
// which on AMD Zen 3 runs an order of magnitude slower than plain vector
// loads and stores when the destination lies just past the source modulo
// a page (16 bytes: a malloc'd buffer against a page-aligned window, i.e.
// every MPI_Get into an ordinary heap buffer; bench/rma_latency's get+flush
// rows show it, and memcpy(a + 16, b, 32 KiB) against offsets 0, 64, 256 or
// 2048 within one process shows the same). So blocks in that range are
// copied with an explicit vector loop; small and huge ones still go to
// memcpy.
#ifndef RMASHIM_SHIM_BASE_COPY_H_
#define RMASHIM_SHIM_BASE_COPY_H_

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

#endif  // RMASHIM_SHIM_BASE_COPY_H_
