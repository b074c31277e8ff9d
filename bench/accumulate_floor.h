// The bulk-accumulate benchmark's ops (bench/rma_accumulate.cc): MPI's
// definition of each as a scalar reference, the CPU floor's loops (what a
// compiler makes of the obvious loop at -O3, for AVX2 too) and the values
// that exercise them. Included by rma_accumulate.cc only, built with -O3.
#ifndef RMASHIM_BENCH_ACCUMULATE_FLOOR_H_
#define RMASHIM_BENCH_ACCUMULATE_FLOOR_H_

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace rmashim_bench {

struct SumOp {
  static constexpr const char* kName = "SUM";
  static MPI_Op Mpi() { return MPI_SUM; }
  template <typename T>
  static T Apply(T t, T o) {
    if constexpr (std::is_integral_v<T>) {  // wraps, as MPI's does
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(
          static_cast<U>(static_cast<U>(t) + static_cast<U>(o)));
    } else {
      return t + o;
    }
  }
};
struct MaxOp {
  static constexpr const char* kName = "MAX";
  static MPI_Op Mpi() { return MPI_MAX; }
  template <typename T>
  static T Apply(T t, T o) {
    return t > o ? t : o;
  }
};
struct ReplaceOp {
  static constexpr const char* kName = "REPLACE";
  static MPI_Op Mpi() { return MPI_REPLACE; }
  template <typename T>
  static T Apply(T, T o) {
    return o;
  }
};

// The floor: what a compiler makes of the obvious loop (vectorized at -O3;
// no aliasing between the buffers, as MPI guarantees for these), built for
// AVX2 too and run that way where the CPU has it, as the shim's loops are.
template <typename T, typename Op>
[[gnu::noinline]] void FloorAccumulateBaseline(T* __restrict target,
                                               const T* __restrict origin,
                                               size_t n) {
  for (size_t i = 0; i < n; ++i) target[i] = Op::Apply(target[i], origin[i]);
}
template <typename T, typename Op>
[[gnu::noinline, gnu::target("avx2")]] void FloorAccumulateAvx2(
    T* __restrict target, const T* __restrict origin, size_t n) {
  for (size_t i = 0; i < n; ++i) target[i] = Op::Apply(target[i], origin[i]);
}

// (A static initializer: __builtin_cpu_init first, as GCC asks there.)
inline const bool kFloorAvx2 =
    (__builtin_cpu_init(), __builtin_cpu_supports("avx2"));

template <typename T, typename Op>
void FloorAccumulate(T* __restrict target, const T* __restrict origin,
                     size_t n) {
  kFloorAvx2 ? FloorAccumulateAvx2<T, Op>(target, origin, n)
             : FloorAccumulateBaseline<T, Op>(target, origin, n);
}

// Fetching: the old values in one copy, then the loop. At memory speed that
// beats one loop storing result and target (by about a sixth at 1 MiB of
// floats); Open MPI's osc/sm fetches the same way.
template <typename T, typename Op>
void FloorGetAccumulate(T* __restrict target, const T* __restrict origin,
                        T* __restrict result, size_t n) {
  std::memcpy(result, target, n * sizeof(T));
  FloorAccumulate<T, Op>(target, origin, n);
}

// Values that exercise the op: integers wrap under SUM (int8 within two
// sums), mix signs under MAX; floating-point values are multiples of 1/2
// below 2^10 in magnitude, so every sum is exact.
template <typename T>
T Pattern(size_t i, int seed) {
  const uint64_t x =
      (i + 1) * 2654435761u + static_cast<uint64_t>(seed) * 40503u;
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(static_cast<int>(x % 2048) - 1024) / 2;
  } else {
    return static_cast<T>(x >> 7);
  }
}

}  // namespace rmashim_bench

#endif  // RMASHIM_BENCH_ACCUMULATE_FLOOR_H_
