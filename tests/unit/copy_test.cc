// The direct-copy routine (shim/base/copy.h) against memcpy: every size class
// around its vector-loop bounds, odd alignments of both sides, and no byte
// outside the destination range written.
#include "shim/base/copy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace rmashim {
namespace {

TEST(CopyBytes, MatchesMemcpyAtEverySizeClassAndAlignment) {
  const size_t sizes[] = {0,
                          1,
                          7,
                          64,
                          2047,
                          2048,
                          2049,
                          2111,
                          4096,
                          4173,
                          32768,
                          65535,
                          262144 + 17,
                          kVectorCopyMax - 1,
                          kVectorCopyMax,
                          kVectorCopyMax + 3};
  std::vector<uint8_t> src(kVectorCopyMax + 256), dst(kVectorCopyMax + 256);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = static_cast<uint8_t>(i * 131 + 7);
  for (size_t n : sizes) {
    for (size_t src_off : {0u, 1u, 13u, 32u}) {
      for (size_t dst_off : {0u, 3u, 31u, 64u}) {
        std::fill(dst.begin(), dst.end(), uint8_t{0xee});
        CopyBytes(dst.data() + dst_off, src.data() + src_off, n);
        for (size_t i = 0; i < dst_off; ++i) ASSERT_EQ(dst[i], 0xee) << n;
        for (size_t i = 0; i < n; ++i) {
          ASSERT_EQ(dst[dst_off + i], src[src_off + i])
              << "size " << n << " offsets " << src_off << "/" << dst_off
              << " byte " << i;
        }
        for (size_t i = dst_off + n; i < dst.size(); ++i) {
          ASSERT_EQ(dst[i], 0xee) << "size " << n << " wrote past the end";
        }
      }
    }
  }
}

}  // namespace
}  // namespace rmashim
