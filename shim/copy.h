// The copy behind every direct put and get. glibc's memcpy moves mid-sized
// blocks (a few KiB up to its non-temporal threshold) with `rep movsb`,
// which on some AMD EPYC machines (this project's Zen 3 VMs) runs at a
// tenth of the speed of plain vector loads and stores when copying out of
// another process's mapping: a 32 KiB MPI_Get took 17-21 us with memcpy and
// 0.8 us with vector moves (bench/rma_latency, get+flush; puts were not
// affected). So blocks in that range are copied with an explicit vector
// loop; small and huge ones still go to memcpy.
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
