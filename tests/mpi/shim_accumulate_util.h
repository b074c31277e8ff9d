// What the accumulate suites (shim_accumulate_table_test.cc,
// shim_accumulate_derived_test.cc, shim_accumulate_atomicity_test.cc) share:
// values of every predefined type MPICH can accumulate on, the serial
// reference of MPI's predefined operations (and of native MPICH where it
// departs from MPI), reproducible operands and a comparison of value bytes.
// Kept apart so each topic has a file of its own and this exists once.
#ifndef RMASHIM_TESTS_SHIM_ACCUMULATE_UTIL_H_
#define RMASHIM_TESTS_SHIM_ACCUMULATE_UTIL_H_

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rmashim_test::accumulate {

// ---- Values and the serial reference of MPI's predefined operations.

// Whether the MPI library that runs orders unsigned integers as signed ones
// in MPI_MAX and MPI_MIN (MPICH 4.0.2 does; 4.3 and 5.0 do not): asked once
// of MPI_Reduce_local, which shares the reduction code with accumulates.
bool MpiOrdersUnsignedAsSigned();

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

// Bytes of T that hold its value: x87 long double keeps 10 bytes in a
// 16-byte slot whose padding nobody promises to preserve.
template <typename T>
constexpr int ValueBytes() {
  return std::is_same_v<T, long double> ? 10 : static_cast<int>(sizeof(T));
}

// Where an element's value lives: (offset, length) spans; struct padding
// is left out of every comparison.
using Spans = std::vector<std::pair<int, int>>;

template <typename T>
T ScalarCombine(MPI_Op op, T t, T o) {
  if (op == MPI_REPLACE) return o;
  if (op == MPI_NO_OP) return t;
  if constexpr (std::is_same_v<T, bool>) {
    if (op == MPI_LAND) return t && o;
    if (op == MPI_LOR) return t || o;
    if (op == MPI_LXOR) return t != o;
  } else {
    if (op == MPI_MAX) return o > t ? o : t;
    if (op == MPI_MIN) return o < t ? o : t;
    if constexpr (std::is_integral_v<T>) {
      // Wraps like two's-complement hardware, without signed overflow.
      if (op == MPI_SUM) {
        return static_cast<T>(static_cast<uint64_t>(t) +
                              static_cast<uint64_t>(o));
      }
      if (op == MPI_PROD) {
        return static_cast<T>(static_cast<uint64_t>(t) *
                              static_cast<uint64_t>(o));
      }
      if (op == MPI_LAND) return static_cast<T>(t != 0 && o != 0);
      if (op == MPI_LOR) return static_cast<T>(t != 0 || o != 0);
      if (op == MPI_LXOR) return static_cast<T>((t != 0) != (o != 0));
      if (op == MPI_BAND) return static_cast<T>(t & o);
      if (op == MPI_BOR) return static_cast<T>(t | o);
      if (op == MPI_BXOR) return static_cast<T>(t ^ o);
    } else {
      if (op == MPI_SUM) return t + o;
      if (op == MPI_PROD) return t * o;
    }
  }
  ADD_FAILURE() << "no reference for op " << op;
  return t;
}

// The sign of a zero depends on the order floating-point products are
// combined in, which MPI leaves open: -0 compares as +0.
template <typename T>
T PositiveZero(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    if (v == T{0}) return T{0};
  }
  return v;
}

template <typename T>
struct Scalar {
  static constexpr int kExtent = sizeof(T);
  static constexpr bool kUnsigned =
      std::is_unsigned_v<T> && !std::is_same_v<T, bool>;
  static Spans ValueSpans() { return {{0, ValueBytes<T>()}}; }
  static void Make(std::byte* p, int64_t a, int64_t) {
    Store(p, static_cast<T>(a));
  }
  static void Apply(MPI_Op op, std::byte* t, const std::byte* o) {
    Store(t, ScalarCombine(op, Load<T>(t), Load<T>(o)));
  }
  // MPICH 4.0.2 (RMA and collectives alike) orders unsigned integers as
  // signed ones in MPI_MAX and MPI_MIN: MAX(0x12, 0xf1) is 0x12 for
  // MPI_UNSIGNED_CHAR (4.3 and 5.0 do not). Modelled, where the MPI that
  // runs does so, to check native windows and passed-through operations.
  static void ApplyAsMpich(MPI_Op op, std::byte* t, const std::byte* o) {
    if constexpr (kUnsigned) {
      if (!MpiOrdersUnsignedAsSigned()) {
        Apply(op, t, o);
        return;
      }
      using S = std::make_signed_t<T>;
      if (op == MPI_MAX || op == MPI_MIN) {
        Store(t, static_cast<T>(ScalarCombine(op, Load<S>(t), Load<S>(o))));
        return;
      }
    }
    Apply(op, t, o);
  }
  static void Normalize(std::byte* p) { Store(p, PositiveZero(Load<T>(p))); }
};

template <typename R>
struct Complex {
  struct V {
    R re, im;
  };
  static constexpr int kExtent = sizeof(V);
  static Spans ValueSpans() {
    return {{0, ValueBytes<R>()}, {sizeof(R), ValueBytes<R>()}};
  }
  static void Make(std::byte* p, int64_t a, int64_t b) {
    Store(p, V{static_cast<R>(a), static_cast<R>(b)});
  }
  static void Normalize(std::byte* p) {
    const V v = Load<V>(p);
    Store(p, V{PositiveZero(v.re), PositiveZero(v.im)});
  }
  static void Apply(MPI_Op op, std::byte* tp, const std::byte* op_p) {
    V t = Load<V>(tp);
    const V o = Load<V>(op_p);
    if (op == MPI_REPLACE) {
      t = o;
    } else if (op == MPI_SUM) {
      t = {t.re + o.re, t.im + o.im};
    } else if (op == MPI_PROD) {
      t = {t.re * o.re - t.im * o.im, t.re * o.im + t.im * o.re};
    } else if (op != MPI_NO_OP) {
      ADD_FAILURE() << "no complex reference for op " << op;
    }
    Store(tp, t);
  }
};

// MINLOC/MAXLOC pairs as MPI lays them out: a C struct {value; index}.
template <typename Val, typename Idx>
struct Pair {
  struct P {
    Val value;
    Idx index;
  };
  static constexpr int kExtent = sizeof(P);
  static Spans ValueSpans() {
    return {{static_cast<int>(offsetof(P, value)), ValueBytes<Val>()},
            {static_cast<int>(offsetof(P, index)), ValueBytes<Idx>()}};
  }
  static void Make(std::byte* p, int64_t a, int64_t b) {
    P v;
    std::memset(&v, 0, sizeof v);
    v.value = static_cast<Val>(a);
    v.index = static_cast<Idx>(b);
    Store(p, v);
  }
  static void Normalize(std::byte*) {}
  static void Apply(MPI_Op op, std::byte* tp, const std::byte* op_p) {
    P t = Load<P>(tp);
    const P o = Load<P>(op_p);
    if (op == MPI_REPLACE) {
      t = o;
    } else if (op == MPI_MINLOC || op == MPI_MAXLOC) {
      const bool better =
          op == MPI_MINLOC ? o.value < t.value : o.value > t.value;
      if (better) {
        t = o;
      } else if (o.value == t.value && o.index < t.index) {
        t.index = o.index;  // ties keep the smallest index (MPI-3 5.9.4)
      }
    } else if (op != MPI_NO_OP) {
      ADD_FAILURE() << "no pair reference for op " << op;
    }
    Store(tp, t);
  }
};

// MPI-3.1 5.9.2 groups of predefined types.
enum Group : unsigned {
  kCInteger = 1,
  kFortranInteger = 2,
  kFloating = 4,
  kLogical = 8,
  kComplex = 16,
  kByte = 32,
  kPair = 64,
};

struct TypeCase {
  const char* name;
  MPI_Datatype type;
  unsigned group;
  int extent;  // bytes per element in memory
  Spans spans;
  void (*make)(std::byte*, int64_t, int64_t);
  void (*apply)(MPI_Op, std::byte*, const std::byte*);
  void (*apply_as_mpich)(MPI_Op, std::byte*, const std::byte*);
  void (*normalize)(std::byte*);
  bool unsigned_integer = false;
};

// Where native MPICH's result departs from MPI's definition (see
// Scalar::ApplyAsMpich): only where MpiOrdersUnsignedAsSigned.
bool MpichDeparts(const TypeCase& type, MPI_Op op);

// Every predefined type MPICH 4.0.2 can accumulate on, by group.
const std::vector<TypeCase>& Types();

// The entry of Types() called `name`.
const TypeCase& TypeNamed(const std::string& name);

constexpr unsigned kAllGroups = ~0u;
constexpr unsigned kIntegers = kCInteger | kFortranInteger;

struct OpCase {
  const char* name;
  MPI_Op op;
  unsigned groups;  // MPI-3.1 5.9.2: the type groups it is defined on
};

inline const OpCase kOps[] = {
    {"MPI_MAX", MPI_MAX, kIntegers | kFloating},
    {"MPI_MIN", MPI_MIN, kIntegers | kFloating},
    {"MPI_SUM", MPI_SUM, kIntegers | kFloating | kComplex},
    {"MPI_PROD", MPI_PROD, kIntegers | kFloating | kComplex},
    {"MPI_LAND", MPI_LAND, kCInteger | kLogical},
    {"MPI_LOR", MPI_LOR, kCInteger | kLogical},
    {"MPI_LXOR", MPI_LXOR, kCInteger | kLogical},
    {"MPI_BAND", MPI_BAND, kIntegers | kByte},
    {"MPI_BOR", MPI_BOR, kIntegers | kByte},
    {"MPI_BXOR", MPI_BXOR, kIntegers | kByte},
    {"MPI_MINLOC", MPI_MINLOC, kPair},
    {"MPI_MAXLOC", MPI_MAXLOC, kPair},
    {"MPI_REPLACE", MPI_REPLACE, kAllGroups},
    {"MPI_NO_OP", MPI_NO_OP, kAllGroups},
};

// MPI-3.1 11.3.4: compare-and-swap takes integer, logical and byte types.
constexpr unsigned kCasGroups = kIntegers | kLogical | kByte;

// Roles of the values in a table entry.
enum Role : uint64_t {
  kSharedInit,  // the shared block's initial contents (by target)
  kOwnInit,     // an origin's own block, initially (by target)
  kAccValue,    // MPI_Accumulate into the shared block (by origin)
  kGaValue,     // MPI_Get_accumulate into the own block (by origin)
  kFopValue,    // MPI_Fetch_and_op on own block element 0 (by origin)
};

// `n` values of `type` for `op`, determined by who uses them (`who`: an
// origin or a target), the table entry, their role and `salt`.
std::vector<std::byte> Values(const TypeCase& type, MPI_Op op, int who,
                              int entry, Role role, int n, int salt = 0);

// Element-wise `target = target op origin` on n elements.
void ApplyAll(const TypeCase& type, MPI_Op op, std::byte* target,
              const std::byte* origin, int n, bool as_mpich = false);

// First element where the value bytes of `got` and `want` differ, as a
// message; empty when all n agree.
std::string Diff(const TypeCase& type, const std::byte* got,
                 const std::byte* want, int n, const std::string& what);

}  // namespace rmashim_test::accumulate

#endif  // RMASHIM_TESTS_SHIM_ACCUMULATE_UTIL_H_
