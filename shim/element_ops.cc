#include "shim/element_ops.h"

#include <array>
#include <atomic>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "shim/datatype.h"

namespace rmashim {
namespace {

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
  T operator()(T t, T o) const { return t < o ? t : o; }
};
struct Max {
  template <typename T>
  T operator()(T t, T o) const { return t > o ? t : o; }
};
struct Land {
  template <typename T>
  T operator()(T t, T o) const { return static_cast<T>(t != T{} && o != T{}); }
};
struct Lor {
  template <typename T>
  T operator()(T t, T o) const { return static_cast<T>(t != T{} || o != T{}); }
};
struct Lxor {
  template <typename T>
  T operator()(T t, T o) const { return static_cast<T>((t != T{}) != (o != T{})); }
};
struct Band {
  template <typename T>
  T operator()(T t, T o) const { return static_cast<T>(t & o); }
};
struct Bor {
  template <typename T>
  T operator()(T t, T o) const { return static_cast<T>(t | o); }
};
struct Bxor {
  template <typename T>
  T operator()(T t, T o) const { return static_cast<T>(t ^ o); }
};
struct Replace {
  template <typename T>
  T operator()(T, T o) const { return o; }
};
struct NoOp {
  template <typename T>
  T operator()(T t, T) const { return t; }
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
// comes at the end of the file, where templates are instantiated, hence no
// pop).
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
        return reinterpret_cast<V>(reinterpret_cast<U>(t) + reinterpret_cast<U>(o));
      } else {
        return reinterpret_cast<V>(reinterpret_cast<U>(t) * reinterpret_cast<U>(o));
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
                                                const std::byte* origin, size_t n) {
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
[[gnu::target("avx2")]] void SimdLoopAvx2(std::byte* target, const std::byte* origin,
                                          size_t n) {
  SimdLoopBody<T, Op, 32>(target, origin, n);
}

// The bulk shape: the old values to `result` in one copy first, then the op.
// memcpy's wide stores followed by the op's loop beat a fused loop (result
// and target stored in the same pass) by ~15% at memory speed (1 MiB,
// measured); replace is a copy too.
template <typename T, typename Op, bool kAvx2>
void BulkApply(std::byte* target, const std::byte* origin, std::byte* result,
               size_t n) {
  const size_t bytes = n * sizeof(T);
  if (result != nullptr) std::memcpy(result, target, bytes);
  if constexpr (std::is_same_v<Op, Replace>) {
    if (origin != target) std::memcpy(target, origin, bytes);
  } else if constexpr (!std::is_same_v<Op, NoOp>) {
    kAvx2 ? SimdLoopAvx2<T, Op>(target, origin, n) : SimdLoopSse2<T, Op>(target, origin, n);
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

// Whether the plain loops use AVX2 (set once by BuildTables).
bool g_avx2 = false;

template <typename T, typename Op>
ElementOp MakeOp() {
  ElementOp e;
  e.plain = g_avx2 ? &PlainApply<T, Op, true> : &PlainApply<T, Op, false>;
  if constexpr (std::atomic_ref<T>::is_always_lock_free) {
    e.atomic = &AtomicApply<T, Op>;
  }
  e.size = e.extent = sizeof(T);
  e.align = std::atomic_ref<T>::required_alignment;
  return e;
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

// ---- Tables: one row of 15 ops (indexed by the low byte of MPICH's MPI_Op
// handle, MPI_MAX = 1 ... MPI_NO_OP = 14) per predefined type.

using OpRow = std::array<ElementOp, kPredefinedOps>;

template <typename T, typename Op>
void Set(OpRow& row, MPI_Op op) {
  row[OpIndex(op)] = MakeOp<T, Op>();
}

template <typename T>
OpRow AnyTypeRow() {  // REPLACE and NO_OP are defined for every type
  OpRow row{};
  Set<T, Replace>(row, MPI_REPLACE);
  Set<T, NoOp>(row, MPI_NO_OP);
  return row;
}
template <typename T>
OpRow BitwiseRow() {  // MPI_BYTE
  OpRow row = AnyTypeRow<T>();
  Set<T, Band>(row, MPI_BAND);
  Set<T, Bor>(row, MPI_BOR);
  Set<T, Bxor>(row, MPI_BXOR);
  return row;
}
template <typename T>
OpRow LogicalRow() {
  OpRow row = AnyTypeRow<T>();
  Set<T, Land>(row, MPI_LAND);
  Set<T, Lor>(row, MPI_LOR);
  Set<T, Lxor>(row, MPI_LXOR);
  return row;
}
template <typename T>
OpRow ComplexRow() {
  OpRow row = AnyTypeRow<T>();
  Set<T, Sum>(row, MPI_SUM);
  Set<T, Prod>(row, MPI_PROD);
  return row;
}
template <typename T>
OpRow FloatRow() {
  OpRow row = ComplexRow<T>();
  Set<T, Min>(row, MPI_MIN);
  Set<T, Max>(row, MPI_MAX);
  return row;
}
template <typename T>
OpRow IntegerRow() {
  OpRow row = FloatRow<T>();
  Set<T, Land>(row, MPI_LAND);
  Set<T, Lor>(row, MPI_LOR);
  Set<T, Lxor>(row, MPI_LXOR);
  Set<T, Band>(row, MPI_BAND);
  Set<T, Bor>(row, MPI_BOR);
  Set<T, Bxor>(row, MPI_BXOR);
  return row;
}
template <typename V>
OpRow PairRow() {
  OpRow row{};
  auto set = [&row](MPI_Op op, ElementFn fn) {
    ElementOp& e = row[OpIndex(op)];
    e.plain = fn;  // pairs are wider than any lock-free word: striped locks
    e.size = sizeof(V) + sizeof(int);
    e.extent = sizeof(Pair<V>);
    e.align = alignof(Pair<V>);
  };
  set(MPI_MAXLOC, &PairApply<V, Loc<V, true>>);
  set(MPI_MINLOC, &PairApply<V, Loc<V, false>>);
  set(MPI_REPLACE, &PairApply<V, PairReplace<V>>);
  set(MPI_NO_OP, &PairApply<V, PairNoOp<V>>);
  return row;
}

struct Tables {
  std::array<OpRow, 256> builtin{};  // by the low byte of a builtin handle
  std::array<OpRow, 5> pairs{};      // MPI_FLOAT_INT ... MPI_LONG_DOUBLE_INT
  std::array<bool, 256> known{};
};

Tables BuildTables() {
  const char* simd = std::getenv("RMASHIM_SIMD");
  __builtin_cpu_init();  // in case this runs before libgcc's constructor
  g_avx2 = __builtin_cpu_supports("avx2") &&
           !(simd != nullptr && std::strcmp(simd, "sse2") == 0);
  Tables t;
  auto add = [&t](MPI_Datatype type, const OpRow& row) {
    t.builtin[BuiltinTypeIndex(type)] = row;
    t.known[BuiltinTypeIndex(type)] = true;
  };
  for (MPI_Datatype type : {MPI_CHAR, MPI_SIGNED_CHAR, MPI_INT8_T, MPI_INTEGER1}) {
    add(type, IntegerRow<int8_t>());
  }
  for (MPI_Datatype type : {MPI_UNSIGNED_CHAR, MPI_UINT8_T}) add(type, IntegerRow<uint8_t>());
  for (MPI_Datatype type : {MPI_SHORT, MPI_INT16_T, MPI_INTEGER2}) add(type, IntegerRow<int16_t>());
  for (MPI_Datatype type : {MPI_UNSIGNED_SHORT, MPI_UINT16_T}) add(type, IntegerRow<uint16_t>());
  for (MPI_Datatype type : {MPI_INT, MPI_INT32_T, MPI_INTEGER, MPI_INTEGER4, MPI_WCHAR}) {
    add(type, IntegerRow<int32_t>());
  }
  for (MPI_Datatype type : {MPI_UNSIGNED, MPI_UINT32_T}) add(type, IntegerRow<uint32_t>());
  for (MPI_Datatype type : {MPI_LONG, MPI_LONG_LONG_INT, MPI_INT64_T, MPI_INTEGER8,
                            MPI_AINT, MPI_OFFSET, MPI_COUNT}) {
    add(type, IntegerRow<int64_t>());
  }
  for (MPI_Datatype type : {MPI_UNSIGNED_LONG, MPI_UNSIGNED_LONG_LONG, MPI_UINT64_T}) {
    add(type, IntegerRow<uint64_t>());
  }
  for (MPI_Datatype type : {MPI_FLOAT, MPI_REAL, MPI_REAL4}) add(type, FloatRow<float>());
  for (MPI_Datatype type : {MPI_DOUBLE, MPI_DOUBLE_PRECISION, MPI_REAL8}) {
    add(type, FloatRow<double>());
  }
  add(MPI_LONG_DOUBLE, FloatRow<long double>());
  for (MPI_Datatype type : {MPI_C_BOOL, MPI_CXX_BOOL}) add(type, LogicalRow<bool>());
  add(MPI_LOGICAL, LogicalRow<int32_t>());
  for (MPI_Datatype type : {MPI_C_FLOAT_COMPLEX, MPI_CXX_FLOAT_COMPLEX, MPI_COMPLEX,
                            MPI_COMPLEX8}) {
    add(type, ComplexRow<std::complex<float>>());
  }
  for (MPI_Datatype type : {MPI_C_DOUBLE_COMPLEX, MPI_CXX_DOUBLE_COMPLEX,
                            MPI_DOUBLE_COMPLEX, MPI_COMPLEX16}) {
    add(type, ComplexRow<std::complex<double>>());
  }
  for (MPI_Datatype type : {MPI_C_LONG_DOUBLE_COMPLEX, MPI_CXX_LONG_DOUBLE_COMPLEX}) {
    add(type, ComplexRow<std::complex<long double>>());
  }
  add(MPI_BYTE, BitwiseRow<uint8_t>());
  for (MPI_Datatype type : {MPI_PACKED, MPI_CHARACTER}) add(type, AnyTypeRow<uint8_t>());
  add(MPI_2INT, PairRow<int>());
  t.pairs[0] = PairRow<float>();        // MPI_FLOAT_INT
  t.pairs[1] = PairRow<double>();       // MPI_DOUBLE_INT
  t.pairs[2] = PairRow<long>();         // MPI_LONG_INT
  t.pairs[3] = PairRow<short>();        // MPI_SHORT_INT
  t.pairs[4] = PairRow<long double>();  // MPI_LONG_DOUBLE_INT
  return t;
}

const Tables& tables() {
  static const Tables t = BuildTables();
  return t;
}

int PairIndex(MPI_Datatype type) { return PairTypeIndex(type); }

const OpRow* RowFor(MPI_Datatype type) {
  if (IsBuiltinType(type)) {
    const uint32_t index = BuiltinTypeIndex(type);
    return tables().known[index] ? &tables().builtin[index] : nullptr;
  }
  const int pair = PairIndex(type);
  return pair >= 0 ? &tables().pairs[pair] : nullptr;
}

// ---- Compare-and-swap.

template <typename T>
void CasPlain(std::byte* target, const std::byte* origin,
              const std::byte* compare, std::byte* result) {
  const T old = Load<T>(target);
  Store(result, old);
  if (old == Load<T>(compare)) Store(target, Load<T>(origin));
}
template <typename T>
void CasAtomic(std::byte* target, const std::byte* origin,
               const std::byte* compare, std::byte* result) {
  std::atomic_ref<T> ref(*reinterpret_cast<T*>(target));
  T expected = Load<T>(compare);
  ref.compare_exchange_strong(expected, Load<T>(origin));
  Store(result, expected);  // the old value either way
}
template <typename T>
constexpr CompareSwapOp MakeCas() {
  return {&CasAtomic<T>, &CasPlain<T>, sizeof(T),
          static_cast<uint16_t>(std::atomic_ref<T>::required_alignment)};
}

}  // namespace

bool IsPredefinedType(MPI_Datatype type) { return RowFor(type) != nullptr; }

const char* ElementLoopsIsa() {
  tables();
  return g_avx2 ? "avx2" : "sse2";
}

int FindElementOp(MPI_Datatype type, MPI_Op op, const ElementOp** out) {
  const OpRow* row = RowFor(type);
  if (row == nullptr) return MPI_ERR_TYPE;
  if (!IsPredefinedOp(op)) return MPI_ERR_OP;
  const ElementOp& e = (*row)[OpIndex(op)];
  if (e.plain == nullptr) return MPI_ERR_OP;
  *out = &e;
  return MPI_SUCCESS;
}

namespace {

std::array<const CompareSwapOp*, 256> BuildCasTable() {
  std::array<const CompareSwapOp*, 256> table{};
  for (uint32_t i = 0; i < table.size(); ++i) {
    if (!tables().known[i]) continue;
    // Any builtin handle with index i and the row's element size.
    const uint32_t size = tables().builtin[i][OpIndex(MPI_REPLACE)].size;
    const auto type = static_cast<MPI_Datatype>(0x4c000000u | (size << 8) | i);
    const CompareSwapOp* cas = nullptr;
    if (tables().builtin[i][OpIndex(MPI_REPLACE)].extent == size &&
        FindCompareSwap(type, &cas) == MPI_SUCCESS) {
      table[i] = cas;
    }
  }
  return table;
}

}  // namespace

namespace element_tables {
const std::array<ElementOp, kPredefinedOps>* const g_ops =
    tables().builtin.data();
const CompareSwapOp* const* const g_cas = [] {
  static const std::array<const CompareSwapOp*, 256> table = BuildCasTable();
  return table.data();
}();
}  // namespace element_tables

int FindCompareSwap(MPI_Datatype type, const CompareSwapOp** out) {
  static constexpr CompareSwapOp k1 = MakeCas<uint8_t>(), k2 = MakeCas<uint16_t>(),
                                 k4 = MakeCas<uint32_t>(), k8 = MakeCas<uint64_t>();
  const OpRow* row = RowFor(type);
  // CAS is defined for integer, logical and byte types: exactly the rows
  // with a bitwise or logical AND.
  if (row == nullptr || ((*row)[OpIndex(MPI_BAND)].plain == nullptr &&
                         (*row)[OpIndex(MPI_LAND)].plain == nullptr)) {
    return MPI_ERR_TYPE;
  }
  switch ((*row)[OpIndex(MPI_REPLACE)].size) {
    case 1: *out = &k1; return MPI_SUCCESS;
    case 2: *out = &k2; return MPI_SUCCESS;
    case 4: *out = &k4; return MPI_SUCCESS;
    case 8: *out = &k8; return MPI_SUCCESS;
  }
  return MPI_ERR_TYPE;
}

}  // namespace rmashim
