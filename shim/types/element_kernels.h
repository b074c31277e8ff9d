// The kernels behind element_ops.h's tables: MPI's predefined reductions on
// values (as MPICH computes them), the plain loops (SIMD where the element
// type allows), the atomic loops, and MINLOC / MAXLOC on {value, index}
// pairs. Kept apart from the tables (element_ops.cc) so that each reads on
// its own: here what an op does to elements, there which kernel serves
// which (type, op). Everyone else uses element_ops.h.
//
// An internal header, included by element_ops.cc alone, and unlike other
// headers in an unnamed namespace: the kernels keep the internal linkage
// they had inside element_ops.cc. With external linkage their instantiations
// become weak symbols, which GCC neither folds when identical nor inlines
// as freely (measured: ~6% more code, and MPI_REPLACE's plain loops split
// into an outlined part). The diagnostic pragma below likewise stays in
// effect in element_ops.cc, where the templates are instantiated.
#ifndef RMASHIM_SHIM_TYPES_ELEMENT_KERNELS_H_
#define RMASHIM_SHIM_TYPES_ELEMENT_KERNELS_H_

#include <atomic>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "shim/base/copy.h"

namespace rmashim {
namespace {  // see above

// ---- Operations on values (t: target, o: origin), as MPICH computes them.

template <typename T>
T Load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
void Store(std::byte* p, const T& v) {
  std::memcpy(p, &v, sizeof(T));
}

// Integer arithmetic wraps like the two's-complement hardware it runs on:
// computed unsigned, so there is no signed-overflow UB, in the type's own
// width; types narrower than int in unsigned int, since they would
// otherwise be promoted to (signed) int, whose products can overflow.
template <typename T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned,
                                std::make_unsigned_t<T>>;

struct Sum {
  template <typename T>
  T operator()(T t, T o) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Wide<T>>(t) + static_cast<Wide<T>>(o));
    } else {
      return t + o;
    }
  }
};
struct Prod {
  template <typename T>
  T operator()(T t, T o) const {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<Wide<T>>(t) * static_cast<Wide<T>>(o));
    } else {
      return t * o;
    }
  }
};
struct Min {
  template <typename T>
  T operator()(T t, T o) const {
    return t < o ? t : o;
  }
};
struct Max {
  template <typename T>
  T operator()(T t, T o) const {
    return t > o ? t : o;
  }
};
struct Land {
  template <typename T>
  T operator()(T t, T o) const {
    return static_cast<T>(t != T{} && o != T{});
  }
};
struct Lor {
  template <typename T>
  T operator()(T t, T o) const {
    return static_cast<T>(t != T{} || o != T{});
  }
};
struct Lxor {
  template <typename T>
  T operator()(T t, T o) const {
    return static_cast<T>((t != T{}) != (o != T{}));
  }
};
struct Band {
  template <typename T>
  T operator()(T t, T o) const {
    return static_cast<T>(t & o);
  }
};
struct Bor {
  template <typename T>
  T operator()(T t, T o) const {
    return static_cast<T>(t | o);
  }
};
struct Bxor {
  template <typename T>
  T operator()(T t, T o) const {
    return static_cast<T>(t ^ o);
  }
};
struct Replace {
  template <typename T>
  T operator()(T, T o) const {
    return o;
  }
};
struct NoOp {
  template <typename T>
  T operator()(T t, T) const {
    return t;
  }
};

// ---- Element loops.
//
// Plain loops (the caller guarantees exclusive access) come in two shapes,
// chosen once per call. The bulk shape copies the old values to `result`
// (memcpy), then runs a SIMD loop (GCC vector extensions, so whatever the -O
// level and the vectorizer's cost model; operations the ISA lacks are
// lowered lane by lane) with a scalar tail: 32-byte AVX2 vectors on CPUs
// that have AVX2, 16-byte SSE2 vectors (the x86-64 baseline) otherwise or
// with RMASHIM_SIMD=sse2 (chosen once, when the tables are built; wider
// vectors are ~6% faster at memory speed, measured at 1 MiB). The other
// shape is a scalar loop, element by element. The bulk shape reads elements
// ahead of the ones it writes, so it runs only where that is
// indistinguishable from element order: origin either is the target itself
// (MPI_NO_OP hands the target in) or lies apart from it, and result lies
// apart from both (MPI_Get_accumulate requires that of origin and result;
// overlaps with the target are rare enough for the scalar loop).

// Lanes of T in a vector: bool (0 or 1) as a byte.
template <typename T>
using Lane = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
template <typename T>
inline constexpr bool kSimd = std::is_arithmetic_v<T> && sizeof(T) <= 8;

template <typename L, size_t kBytes>
struct VecOf {
  typedef L type __attribute__((vector_size(kBytes)));
};
template <typename L, size_t kBytes>
using Vec = typename VecOf<L, kBytes>::type;

// The vector helpers are always inlined: into the AVX2 loop they must be
// compiled for AVX2 too (and 32-byte vectors are never passed by value, so
// GCC's note that their by-value ABI differs without AVX does not apply; it
// comes at the end of the including file, where templates are instantiated,
// hence no pop).
#pragma GCC diagnostic ignored "-Wpsabi"
template <typename V>
[[gnu::always_inline]] inline V LoadVec(const std::byte* p) {
  V v;
  std::memcpy(&v, p, sizeof(V));
  return v;
}
template <typename V>
[[gnu::always_inline]] inline void StoreVec(std::byte* p, V v) {
  std::memcpy(p, &v, sizeof(V));
}

// One vector of `Op` on lanes of type L, lane by lane what Op{}(t, o) is.
template <typename L, typename Op, typename V>
[[gnu::always_inline]] inline V VecApply(V t, V o) {
  if constexpr (std::is_same_v<Op, Sum> || std::is_same_v<Op, Prod>) {
    if constexpr (std::is_integral_v<L>) {
      using U = Vec<std::make_unsigned_t<L>, sizeof(V)>;  // wraps without UB
      if constexpr (std::is_same_v<Op, Sum>) {
        return reinterpret_cast<V>(reinterpret_cast<U>(t) +
                                   reinterpret_cast<U>(o));
      } else {
        return reinterpret_cast<V>(reinterpret_cast<U>(t) *
                                   reinterpret_cast<U>(o));
      }
    } else if constexpr (std::is_same_v<Op, Sum>) {
      return t + o;
    } else {
      return t * o;
    }
  } else if constexpr (std::is_same_v<Op, Min>) {
    return t < o ? t : o;
  } else if constexpr (std::is_same_v<Op, Max>) {
    return t > o ? t : o;
  } else if constexpr (std::is_same_v<Op, Land>) {
    return reinterpret_cast<V>((t != 0) & (o != 0) & 1);
  } else if constexpr (std::is_same_v<Op, Lor>) {
    return reinterpret_cast<V>(((t != 0) | (o != 0)) & 1);
  } else if constexpr (std::is_same_v<Op, Lxor>) {
    return reinterpret_cast<V>(((t != 0) ^ (o != 0)) & 1);
  } else if constexpr (std::is_same_v<Op, Band>) {
    return t & o;
  } else if constexpr (std::is_same_v<Op, Bor>) {
    return t | o;
  } else if constexpr (std::is_same_v<Op, Bxor>) {
    return t ^ o;
  } else if constexpr (std::is_same_v<Op, Replace>) {
    return o;
  } else {
    static_assert(std::is_same_v<Op, NoOp>);
    return t;
  }
}

template <typename T, typename Op, bool kResult>
void ScalarLoop(std::byte* target, const std::byte* origin, std::byte* result,
                size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const T old = Load<T>(target + i * sizeof(T));
    if constexpr (kResult) Store(result + i * sizeof(T), old);
    if constexpr (!std::is_same_v<Op, NoOp>) {
      Store(target + i * sizeof(T), Op{}(old, Load<T>(origin + i * sizeof(T))));
    }
  }
}

// target[i] = op(target[i], origin[i]), kBytes-byte vector by vector.
template <typename T, typename Op, size_t kBytes>
[[gnu::always_inline]] inline void SimdLoopBody(std::byte* target,
                                                const std::byte* origin,
                                                size_t n) {
  using L = Lane<T>;
  using V = Vec<L, kBytes>;
  constexpr size_t kStep = 2 * kBytes;  // two vectors per iteration
  const size_t bytes = n * sizeof(T);
  size_t b = 0;
  for (; b + kStep <= bytes; b += kStep) {
    const V t0 = LoadVec<V>(target + b);
    const V t1 = LoadVec<V>(target + b + kBytes);
    const V o0 = LoadVec<V>(origin + b);
    const V o1 = LoadVec<V>(origin + b + kBytes);
    StoreVec(target + b, VecApply<L, Op>(t0, o0));
    StoreVec(target + b + kBytes, VecApply<L, Op>(t1, o1));
  }
  ScalarLoop<T, Op, false>(target + b, origin + b, nullptr, n - b / sizeof(T));
}

template <typename T, typename Op>
void SimdLoopSse2(std::byte* target, const std::byte* origin, size_t n) {
  SimdLoopBody<T, Op, 16>(target, origin, n);
}
template <typename T, typename Op>
[[gnu::target("avx2")]] void SimdLoopAvx2(std::byte* target,
                                          const std::byte* origin, size_t n) {
  SimdLoopBody<T, Op, 32>(target, origin, n);
}

// The bulk shape: the old values to `result` in one copy first, then the op.
// A copy's wide stores followed by the op's loop beat a fused loop (result
// and target stored in the same pass) by ~15% at memory speed (1 MiB,
// measured); replace is a copy too. The copies are CopyBytes
// (shim/base/copy.h), not memcpy: a shared-lock update runs stripe by
// stripe (16 KiB, `ApplyRun` in shim/atomics/striped_apply.cc), the size
// where glibc's `rep movsb` slows down when the destination lies just past
// the source modulo a page, as a malloc'd result buffer against a
// page-aligned window does.
template <typename T, typename Op, bool kAvx2>
void BulkApply(std::byte* target, const std::byte* origin, std::byte* result,
               size_t n) {
  const size_t bytes = n * sizeof(T);
  if (result != nullptr) CopyBytes(result, target, bytes);
  if constexpr (std::is_same_v<Op, Replace>) {
    if (origin != target) CopyBytes(target, origin, bytes);
  } else if constexpr (!std::is_same_v<Op, NoOp>) {
    kAvx2 ? SimdLoopAvx2<T, Op>(target, origin, n)
          : SimdLoopSse2<T, Op>(target, origin, n);
  }
}

inline bool Apart(const std::byte* a, const std::byte* b, size_t bytes) {
  const auto x = reinterpret_cast<uintptr_t>(a);
  const auto y = reinterpret_cast<uintptr_t>(b);
  return x + bytes <= y || y + bytes <= x;
}

// Whether the bulk shape computes what the element-by-element loop does.
inline bool SimdSafe(const std::byte* target, const std::byte* origin,
                     const std::byte* result, size_t bytes) {
  return (origin == target || Apart(origin, target, bytes)) &&
         (result == nullptr ||
          (Apart(result, target, bytes) && Apart(result, origin, bytes)));
}

// The part type of a complex type whose parts vectorize; void otherwise.
template <typename T>
struct SimdParts {
  using type = void;
};
template <typename V>
struct SimdParts<std::complex<V>> {
  using type = std::conditional_t<kSimd<V>, V, void>;
};

template <typename T, typename Op, bool kAvx2>
void PlainApply(std::byte* target, const std::byte* origin, std::byte* result,
                size_t n) {
  using Parts = typename SimdParts<T>::type;
  if constexpr (!std::is_void_v<Parts> &&
                (std::is_same_v<Op, Sum> || std::is_same_v<Op, Replace> ||
                 std::is_same_v<Op, NoOp>)) {
    // Part by part: a complex sum is the sum of the real and the imaginary
    // parts; replace and no-op just move them.
    PlainApply<Parts, Op, kAvx2>(target, origin, result, 2 * n);
  } else if constexpr (kSimd<T>) {
    if (SimdSafe(target, origin, result, n * sizeof(T))) {
      BulkApply<T, Op, kAvx2>(target, origin, result, n);
    } else {
      result != nullptr ? ScalarLoop<T, Op, true>(target, origin, result, n)
                        : ScalarLoop<T, Op, false>(target, origin, result, n);
    }
  } else {
    result != nullptr ? ScalarLoop<T, Op, true>(target, origin, result, n)
                      : ScalarLoop<T, Op, false>(target, origin, result, n);
  }
}

// Without `result` (MPI_Accumulate) the integer ops discard the old value,
// so the compiler emits `lock add/and/or/xor`: one locked access. Fetching
// the old value of and/or/xor takes a load and a CAS loop, and when the line
// is not in this core's cache, that is two coherence transactions (the load
// shares the line, the CAS must then own it): random-access updates such as
// GUPS pay it twice.
template <typename T, typename Op>
void AtomicApplyNoResult(std::byte* target, const std::byte* origin, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    std::atomic_ref<T> ref(*reinterpret_cast<T*>(target + i * sizeof(T)));
    const T x = Load<T>(origin + i * sizeof(T));
    if constexpr (std::is_same_v<Op, Sum>) {
      ref.fetch_add(x);
    } else if constexpr (std::is_same_v<Op, Band>) {
      ref.fetch_and(x);
    } else if constexpr (std::is_same_v<Op, Bor>) {
      ref.fetch_or(x);
    } else {
      ref.fetch_xor(x);
    }
  }
}

template <typename T, typename Op>
void AtomicApply(std::byte* target, const std::byte* origin, std::byte* result,
                 size_t n) {
  constexpr bool kInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
  if constexpr (kInt && (std::is_same_v<Op, Sum> || std::is_same_v<Op, Band> ||
                         std::is_same_v<Op, Bor> || std::is_same_v<Op, Bxor>)) {
    if (result == nullptr) return AtomicApplyNoResult<T, Op>(target, origin, n);
  }
  for (size_t i = 0; i < n; ++i) {
    std::atomic_ref<T> ref(*reinterpret_cast<T*>(target + i * sizeof(T)));
    const T x = Load<T>(origin + i * sizeof(T));
    T old;
    if constexpr (std::is_same_v<Op, NoOp>) {
      old = ref.load();
    } else if constexpr (std::is_same_v<Op, Replace>) {
      old = ref.exchange(x);
    } else if constexpr (kInt && std::is_same_v<Op, Sum>) {
      old = ref.fetch_add(x);
    } else if constexpr (kInt && std::is_same_v<Op, Band>) {
      old = ref.fetch_and(x);
    } else if constexpr (kInt && std::is_same_v<Op, Bor>) {
      old = ref.fetch_or(x);
    } else if constexpr (kInt && std::is_same_v<Op, Bxor>) {
      old = ref.fetch_xor(x);
    } else {
      old = ref.load(std::memory_order_relaxed);
      while (!ref.compare_exchange_weak(old, Op{}(old, x))) {
      }
    }
    if (result != nullptr) Store(result + i * sizeof(T), old);
  }
}

// MPI_MINLOC / MPI_MAXLOC work on {value, int index} pairs: laid out as a C
// struct in memory, value then index without padding when packed.
template <typename V>
struct Pair {
  V value;
  int index;
};

template <typename V, bool kMax>
struct Loc {
  void operator()(V& value, int& index, V o_value, int o_index) const {
    const bool better = kMax ? o_value > value : o_value < value;
    if (better) {
      value = o_value;
      index = o_index;
    } else if (o_value == value && o_index < index) {
      index = o_index;
    }
  }
};
template <typename V>
struct PairReplace {
  void operator()(V& value, int& index, V o_value, int o_index) const {
    value = o_value;
    index = o_index;
  }
};
template <typename V>
struct PairNoOp {
  void operator()(V&, int&, V, int) const {}
};

template <typename V, typename Op>
void PairApply(std::byte* target, const std::byte* origin, std::byte* result,
               size_t n) {
  constexpr size_t kPacked = sizeof(V) + sizeof(int);
  for (size_t i = 0; i < n; ++i) {
    std::byte* t = target + i * sizeof(Pair<V>);
    Pair<V> p = Load<Pair<V>>(t);
    if (result != nullptr) {
      Store(result + i * kPacked, p.value);
      Store(result + i * kPacked + sizeof(V), p.index);
    }
    const std::byte* o = origin + i * kPacked;
    Op{}(p.value, p.index, Load<V>(o), Load<int>(o + sizeof(V)));
    Store(t + offsetof(Pair<V>, value), p.value);
    Store(t + offsetof(Pair<V>, index), p.index);
  }
}

}  // namespace
}  // namespace rmashim

#endif  // RMASHIM_SHIM_TYPES_ELEMENT_KERNELS_H_
