// The element kernels of shim/types/element_kernels.h against a scalar
// reference written here: every predefined op on every row of predefined types
// (integers of every width and sign, floating point, complex, logical, byte,
// MINLOC/MAXLOC pairs), lengths 0..70, odd alignments of target, origin and
// result, with and without a result buffer; the plain (SIMD where it can)
// and the atomic flavour; and overlapping origin/target/result, where the
// outcome must be that of the element-by-element loop. No MPI calls: the
// tables are built from MPICH's handle constants. Runs twice
// (tests/unit/BUILD): with the loops the CPU supports best (AVX2 here) and with
// RMASHIM_SIMD=sse2 (the x86-64 baseline); ELEMENT_OPS_EXPECT_ISA says which.
#include "shim/types/element_ops.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <complex>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace rmashim {
namespace {

template <typename V>
struct Pair {  // MINLOC/MAXLOC operands in memory
  V value;
  int index;
};

template <typename T>
struct IsPair : std::false_type {};
template <typename V>
struct IsPair<Pair<V>> : std::true_type {};
template <typename T>
struct IsComplex : std::false_type {};
template <typename V>
struct IsComplex<std::complex<V>> : std::true_type {};

template <typename T>
T Get(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
void Put(std::byte* p, const T& v) {
  std::memcpy(p, &v, sizeof(T));
}

// Bytes of a value that carry it (long double: 10 of its 16).
template <typename T>
constexpr size_t kValueBytes = std::is_same_v<T, long double> ? 10 : sizeof(T);

// ---- Reference: MPI's definition of each op, one element at a time.

template <typename T>
T RefOp(int op, T t, T o, bool* defined) {
  *defined = true;
  if (op == (MPI_REPLACE & 0xff)) return o;
  if (op == (MPI_NO_OP & 0xff)) return t;
  if constexpr (std::is_same_v<T, bool>) {
    if (op == (MPI_LAND & 0xff)) return t && o;
    if (op == (MPI_LOR & 0xff)) return t || o;
    if (op == (MPI_LXOR & 0xff)) return t != o;
  } else if constexpr (std::is_integral_v<T>) {
    using U = uint64_t;  // wraps, computed wider than the kernels do
    if (op == (MPI_SUM & 0xff)) return static_cast<T>(U(t) + U(o));
    if (op == (MPI_PROD & 0xff)) return static_cast<T>(U(t) * U(o));
    if (op == (MPI_MIN & 0xff)) return o < t ? o : t;
    if (op == (MPI_MAX & 0xff)) return o > t ? o : t;
    if (op == (MPI_LAND & 0xff)) return (t != 0) && (o != 0);
    if (op == (MPI_LOR & 0xff)) return (t != 0) || (o != 0);
    if (op == (MPI_LXOR & 0xff)) return (t != 0) != (o != 0);
    if (op == (MPI_BAND & 0xff)) return t & o;
    if (op == (MPI_BOR & 0xff)) return t | o;
    if (op == (MPI_BXOR & 0xff)) return t ^ o;
  } else if constexpr (std::is_floating_point_v<T>) {
    if (op == (MPI_SUM & 0xff)) return t + o;
    if (op == (MPI_PROD & 0xff)) return t * o;
    // Which operand wins on NaN or equal zeros of both signs is what the
    // kernels choose too (the scalar code's t < o ? t : o).
    if (op == (MPI_MIN & 0xff)) return t < o ? t : o;
    if (op == (MPI_MAX & 0xff)) return t > o ? t : o;
  } else if constexpr (IsComplex<T>::value) {
    if (op == (MPI_SUM & 0xff)) return t + o;
    if (op == (MPI_PROD & 0xff)) return t * o;
  } else if constexpr (IsPair<T>::value) {
    const bool max = op == (MPI_MAXLOC & 0xff);
    if (max || op == (MPI_MINLOC & 0xff)) {
      if (max ? o.value > t.value : o.value < t.value) return o;
      if (o.value == t.value && o.index < t.index) t.index = o.index;
      return t;
    }
  }
  *defined = false;
  return t;
}

// Packed (origin/result) layout: pairs without padding.
template <typename T>
T GetPacked(const std::byte* p) {
  if constexpr (IsPair<T>::value) {
    T v{};
    std::memcpy(&v.value, p, sizeof(v.value));
    std::memcpy(&v.index, p + sizeof(v.value), sizeof(int));
    return v;
  } else {
    return Get<T>(p);
  }
}
template <typename T>
void PutPacked(std::byte* p, const T& v) {
  if constexpr (IsPair<T>::value) {
    std::memcpy(p, &v.value, sizeof(v.value));
    std::memcpy(p + sizeof(v.value), &v.index, sizeof(int));
  } else {
    Put(p, v);
  }
}
// In memory (target): pairs with their struct padding, which is left alone.
template <typename T>
void PutTarget(std::byte* p, const T& v) {
  if constexpr (IsPair<T>::value) {
    std::memcpy(p + offsetof(T, value), &v.value, sizeof(v.value));
    std::memcpy(p + offsetof(T, index), &v.index, sizeof(int));
  } else {
    Put(p, v);
  }
}

template <typename T>
bool SameValue(const T& a, const T& b) {
  if constexpr (IsPair<T>::value) {
    return SameValue(a.value, b.value) && a.index == b.index;
  } else if constexpr (IsComplex<T>::value) {
    return SameValue(a.real(), b.real()) && SameValue(a.imag(), b.imag());
  } else {
    return std::memcmp(&a, &b, kValueBytes<T>) == 0;  // NaN bits too
  }
}

// ---- Values: random, with the edge cases of each kind.

template <typename T>
T RandomValue(std::mt19937_64& rng) {
  if constexpr (std::is_same_v<T, bool>) {
    return rng() & 1;
  } else if constexpr (std::is_integral_v<T>) {
    const uint64_t r = rng();
    switch (r % 8) {  // often 0 (logical ops), extremes, small values (ties)
      case 0:
        return 0;
      case 1:
        return std::numeric_limits<T>::max();
      case 2:
        return std::numeric_limits<T>::min();
      case 3:
        return static_cast<T>(r >> 60);
      default:
        return static_cast<T>(r >> 8);
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    static const T kSpecial[] = {T(0),
                                 -T(0),
                                 T(1),
                                 T(-1),
                                 T(0.5),
                                 T(-3.25),
                                 T(7),
                                 T(1e30),
                                 T(-1e30),
                                 std::numeric_limits<T>::infinity(),
                                 -std::numeric_limits<T>::infinity(),
                                 std::numeric_limits<T>::quiet_NaN(),
                                 std::numeric_limits<T>::denorm_min()};
    const uint64_t r = rng();
    if (r % 2) return kSpecial[(r >> 8) % std::size(kSpecial)];
    return static_cast<T>(static_cast<int64_t>(r >> 40) - (int64_t{1} << 23)) /
           T(64);
  } else if constexpr (IsComplex<T>::value) {
    using V = typename T::value_type;
    return T(RandomValue<V>(rng), RandomValue<V>(rng));
  } else {
    static_assert(IsPair<T>::value);
    T v{};
    v.value = static_cast<decltype(v.value)>(static_cast<int>(rng() % 5) - 2);
    v.index = static_cast<int>(rng() % 4);
    return v;
  }
}

struct Config {
  size_t n;
  size_t target_skew, origin_skew, result_skew;  // bytes past 64-byte alignment
  bool with_result;
};

std::string Describe(const char* type, int op, const Config& c,
                     const char* flavour) {
  return std::string(type) + " op " + std::to_string(op) + " " + flavour +
         " n=" + std::to_string(c.n) + " skews " +
         std::to_string(c.target_skew) + "/" + std::to_string(c.origin_skew) +
         "/" + std::to_string(c.result_skew) +
         (c.with_result ? " with result" : " without result");
}

// Buffers with slack on both sides, checked to stay untouched.
constexpr size_t kSlack = 64;
constexpr std::byte kGuard{0xa5};

struct Buffers {
  std::vector<std::byte> target, origin, result;
  std::byte* t;
  std::byte* o;
  std::byte* r;
  Buffers(size_t target_bytes, size_t packed_bytes, const Config& c)
      : target(target_bytes + 3 * kSlack, kGuard),
        origin(packed_bytes + 3 * kSlack, kGuard),
        result(packed_bytes + 3 * kSlack, kGuard) {
    t = Aligned(target) + c.target_skew;
    o = Aligned(origin) + c.origin_skew;
    r = Aligned(result) + c.result_skew;
  }
  static std::byte* Aligned(std::vector<std::byte>& v) {
    const auto p = reinterpret_cast<uintptr_t>(v.data()) + kSlack;
    return reinterpret_cast<std::byte*>((p + 63) / 64 * 64);
  }
};

bool GuardsIntact(const std::vector<std::byte>& v, const std::byte* begin,
                  size_t bytes) {
  for (size_t i = 0; i < v.size(); ++i) {
    const std::byte* p = v.data() + i;
    if ((p < begin || p >= begin + bytes) && *p != kGuard) return false;
  }
  return true;
}

// One (type, op, config) through `fn` against the reference.
template <typename T>
void CheckOne(const char* type_name, int op, const ElementOp& e, ElementFn fn,
              const char* flavour, const Config& c, std::mt19937_64& rng) {
  const size_t n = c.n;
  Buffers b(n * e.extent, n * e.size, c);
  // (Arrays, not vectors: std::vector<bool> hands out proxies.)
  std::unique_ptr<T[]> target0(new T[n]), origin(new T[n]),
      expect_target(new T[n]), expect_result(new T[n]);
  for (size_t i = 0; i < n; ++i) {
    target0[i] = RandomValue<T>(rng);
    origin[i] = RandomValue<T>(rng);
    PutTarget(b.t + i * e.extent, target0[i]);
    PutPacked(b.o + i * e.size, origin[i]);
    bool defined = false;
    expect_result[i] = target0[i];
    expect_target[i] = RefOp(op, target0[i], origin[i], &defined);
    ASSERT_TRUE(defined) << "no reference for " << type_name << " op " << op;
  }
  fn(b.t, b.o, c.with_result ? b.r : nullptr, n);
  const std::string what = Describe(type_name, op, c, flavour);
  for (size_t i = 0; i < n; ++i) {
    T got;
    if constexpr (IsPair<T>::value) {
      got.value =
          Get<decltype(got.value)>(b.t + i * e.extent + offsetof(T, value));
      got.index = Get<int>(b.t + i * e.extent + offsetof(T, index));
    } else {
      got = Get<T>(b.t + i * e.extent);
    }
    ASSERT_TRUE(SameValue(got, expect_target[i]))
        << what << ": target element " << i;
    if (c.with_result) {
      ASSERT_TRUE(SameValue(GetPacked<T>(b.r + i * e.size), expect_result[i]))
          << what << ": result element " << i;
    }
    ASSERT_TRUE(SameValue(GetPacked<T>(b.o + i * e.size), origin[i]))
        << what << ": origin element " << i << " changed";
  }
  ASSERT_TRUE(GuardsIntact(b.target, b.t, n * e.extent))
      << what << ": wrote outside the target";
  ASSERT_TRUE(GuardsIntact(b.origin, b.o, n * e.size))
      << what << ": wrote to the origin";
  ASSERT_TRUE(GuardsIntact(b.result, b.r, c.with_result ? n * e.size : 0))
      << what << ": wrote outside the result";
}

template <typename T>
void CheckType(MPI_Datatype type, const char* type_name) {
  std::mt19937_64 rng(0x5eed ^ static_cast<uint64_t>(type));
  int ops = 0;
  for (int op = 1; op <= 14; ++op) {
    const ElementOp* e = nullptr;
    if (FindElementOp(type, static_cast<MPI_Op>(0x58000000 | op), &e) !=
        MPI_SUCCESS)
      continue;
    ++ops;
    ASSERT_NE(e->plain, nullptr);
    const size_t skews[][3] = {
        {0, 0, 0}, {1, 3, 5}, {3, 1, 7}, {7, 6, 2}, {2, 4, 0}};
    for (size_t n = 0; n <= 70; ++n) {
      for (const auto& s : skews) {
        for (bool with_result : {false, true}) {
          const Config c{n, s[0], s[1], s[2], with_result};
          CheckOne<T>(type_name, op, *e, e->plain, "plain", c, rng);
          if (::testing::Test::HasFatalFailure()) return;
          // The atomic flavour needs aligned target elements.
          if (e->atomic != nullptr && c.target_skew % e->align == 0) {
            CheckOne<T>(type_name, op, *e, e->atomic, "atomic", c, rng);
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  }
  EXPECT_GT(ops, 0) << type_name << " has no ops";
}

TEST(ElementOpsTest, LoopsUseTheExpectedIsa) {
  const char* expect = std::getenv("ELEMENT_OPS_EXPECT_ISA");
  if (expect == nullptr) GTEST_SKIP() << "ELEMENT_OPS_EXPECT_ISA not set";
  std::string want = expect;
  if (want == "best") want = __builtin_cpu_supports("avx2") ? "avx2" : "sse2";
  EXPECT_EQ(ElementLoopsIsa(), want);
}

TEST(ElementOpsTest, SignedChar) {
  CheckType<int8_t>(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR");
}
TEST(ElementOpsTest, Int8) { CheckType<int8_t>(MPI_INT8_T, "MPI_INT8_T"); }
TEST(ElementOpsTest, UnsignedChar) {
  CheckType<uint8_t>(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR");
}
TEST(ElementOpsTest, Byte) { CheckType<uint8_t>(MPI_BYTE, "MPI_BYTE"); }
TEST(ElementOpsTest, Short) { CheckType<int16_t>(MPI_SHORT, "MPI_SHORT"); }
TEST(ElementOpsTest, UnsignedShort) {
  CheckType<uint16_t>(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT");
}
TEST(ElementOpsTest, Int) { CheckType<int32_t>(MPI_INT, "MPI_INT"); }
TEST(ElementOpsTest, Unsigned) {
  CheckType<uint32_t>(MPI_UNSIGNED, "MPI_UNSIGNED");
}
TEST(ElementOpsTest, Logical) {
  CheckType<int32_t>(MPI_LOGICAL, "MPI_LOGICAL");
}
TEST(ElementOpsTest, Long) { CheckType<int64_t>(MPI_LONG, "MPI_LONG"); }
TEST(ElementOpsTest, UnsignedLong) {
  CheckType<uint64_t>(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG");
}
TEST(ElementOpsTest, Float) { CheckType<float>(MPI_FLOAT, "MPI_FLOAT"); }
TEST(ElementOpsTest, Double) { CheckType<double>(MPI_DOUBLE, "MPI_DOUBLE"); }
TEST(ElementOpsTest, LongDouble) {
  CheckType<long double>(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE");
}
TEST(ElementOpsTest, Bool) { CheckType<bool>(MPI_C_BOOL, "MPI_C_BOOL"); }
TEST(ElementOpsTest, FloatComplex) {
  CheckType<std::complex<float>>(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX");
}
TEST(ElementOpsTest, DoubleComplex) {
  CheckType<std::complex<double>>(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX");
}
TEST(ElementOpsTest, LongDoubleComplex) {
  CheckType<std::complex<long double>>(MPI_C_LONG_DOUBLE_COMPLEX,
                                       "MPI_C_LONG_DOUBLE_COMPLEX");
}
TEST(ElementOpsTest, TwoInt) { CheckType<Pair<int>>(MPI_2INT, "MPI_2INT"); }
TEST(ElementOpsTest, FloatInt) {
  CheckType<Pair<float>>(MPI_FLOAT_INT, "MPI_FLOAT_INT");
}
TEST(ElementOpsTest, DoubleInt) {
  CheckType<Pair<double>>(MPI_DOUBLE_INT, "MPI_DOUBLE_INT");
}
TEST(ElementOpsTest, LongInt) {
  CheckType<Pair<long>>(MPI_LONG_INT, "MPI_LONG_INT");
}
TEST(ElementOpsTest, ShortInt) {
  CheckType<Pair<short>>(MPI_SHORT_INT, "MPI_SHORT_INT");
}
TEST(ElementOpsTest, LongDoubleInt) {
  CheckType<Pair<long double>>(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT");
}

// ---- Overlaps: the outcome of the element-by-element loop.

// Element by element, in order, on the live buffers (what the SIMD loop
// must not be used for unless it gives the same).
template <typename T>
void SequentialRef(int op, std::byte* target, const std::byte* origin,
                   std::byte* result, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const T old = Get<T>(target + i * sizeof(T));
    if (result != nullptr) Put(result + i * sizeof(T), old);
    bool defined = false;
    const T o = Get<T>(origin + i * sizeof(T));
    if (op != (MPI_NO_OP & 0xff))
      Put(target + i * sizeof(T), RefOp(op, old, o, &defined));
  }
}

template <typename T>
void CheckOverlaps(MPI_Datatype type, MPI_Op mpi_op) {
  const ElementOp* e = nullptr;
  ASSERT_EQ(FindElementOp(type, mpi_op, &e), MPI_SUCCESS);
  const int op = mpi_op & 0xff;
  std::mt19937_64 rng(42);
  constexpr size_t kSpan = 200;
  // Element offsets of origin and result relative to the target; -1000:
  // no result buffer. Origin == target is MPI_NO_OP's case.
  const long cases[][2] = {{0, -1000},  {1, -1000},  {-1, -1000},  {3, -1000},
                           {-5, -1000}, {17, -1000}, {-33, -1000}, {100, 0},
                           {100, 1},    {100, -2},   {0, 100},     {40, 80},
                           {90, 45}};
  for (size_t n : {size_t{5}, size_t{16}, size_t{31}, size_t{64}, size_t{70}}) {
    for (const auto& c : cases) {
      std::vector<std::byte> live(kSpan * 3 * sizeof(T)), ref;
      for (size_t i = 0; i < kSpan * 3; ++i)
        Put(live.data() + i * sizeof(T), RandomValue<T>(rng));
      ref = live;
      const size_t t_at = kSpan;
      auto at = [&](std::vector<std::byte>& v, long k) {
        return v.data() + (t_at + k) * sizeof(T);
      };
      const bool with_result = c[1] != -1000;
      e->plain(at(live, 0), at(live, c[0]),
               with_result ? at(live, c[1]) : nullptr, n);
      SequentialRef<T>(op, at(ref, 0), at(ref, c[0]),
                       with_result ? at(ref, c[1]) : nullptr, n);
      for (size_t i = 0; i < kSpan * 3; ++i) {
        ASSERT_TRUE(SameValue(Get<T>(live.data() + i * sizeof(T)),
                              Get<T>(ref.data() + i * sizeof(T))))
            << "op " << op << " n=" << n << " origin at " << c[0]
            << " result at " << c[1] << ": element "
            << static_cast<long>(i) - static_cast<long>(t_at);
      }
    }
  }
}

TEST(ElementOpsTest, OverlapsKeepElementOrder) {
  CheckOverlaps<int8_t>(MPI_SIGNED_CHAR, MPI_SUM);
  CheckOverlaps<int8_t>(MPI_SIGNED_CHAR, MPI_REPLACE);
  CheckOverlaps<int32_t>(MPI_INT, MPI_MAX);
  CheckOverlaps<float>(MPI_FLOAT, MPI_SUM);
  CheckOverlaps<double>(MPI_DOUBLE, MPI_NO_OP);
  CheckOverlaps<double>(MPI_DOUBLE, MPI_REPLACE);
  CheckOverlaps<int64_t>(MPI_LONG, MPI_BXOR);
}

}  // namespace
}  // namespace rmashim
