// What the DART one-sided suites (dart_onesided_completion_test.cc,
// dart_onesided_memory_test.cc) share: the values every unit writes to
// every other, so that misplaced data shows.
#ifndef RMASHIM_TESTS_DART_ONESIDED_UTIL_H_
#define RMASHIM_TESTS_DART_ONESIDED_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dart_testing::onesided {

// The value unit `from` writes to element `i` of unit `to`'s block.
inline int32_t Pattern(int from, int to, size_t i) {
  return static_cast<int32_t>(from * 1000003 + to * 7919 + i);
}

// Pattern(from, to, i) for i in [0, n).
inline std::vector<int32_t> Block(int from, int to, size_t n) {
  std::vector<int32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = Pattern(from, to, i);
  return v;
}

}  // namespace dart_testing::onesided

#endif  // RMASHIM_TESTS_DART_ONESIDED_UTIL_H_
