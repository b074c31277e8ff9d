// The tables behind element_ops.h: for every predefined type, the kernel
// (element_kernels.h) of each predefined op MPI defines for it, built once;
// the lookups into them, and compare-and-swap.
#include "shim/types/element_ops.h"

#include <array>
#include <atomic>
#include <complex>
#include <cstdlib>
#include <cstring>

#include "shim/types/datatype.h"
#include "shim/types/element_kernels.h"

namespace rmashim {
namespace {

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
  for (MPI_Datatype type :
       {MPI_CHAR, MPI_SIGNED_CHAR, MPI_INT8_T, MPI_INTEGER1}) {
    add(type, IntegerRow<int8_t>());
  }
  for (MPI_Datatype type : {MPI_UNSIGNED_CHAR, MPI_UINT8_T})
    add(type, IntegerRow<uint8_t>());
  for (MPI_Datatype type : {MPI_SHORT, MPI_INT16_T, MPI_INTEGER2})
    add(type, IntegerRow<int16_t>());
  for (MPI_Datatype type : {MPI_UNSIGNED_SHORT, MPI_UINT16_T})
    add(type, IntegerRow<uint16_t>());
  for (MPI_Datatype type :
       {MPI_INT, MPI_INT32_T, MPI_INTEGER, MPI_INTEGER4, MPI_WCHAR}) {
    add(type, IntegerRow<int32_t>());
  }
  for (MPI_Datatype type : {MPI_UNSIGNED, MPI_UINT32_T})
    add(type, IntegerRow<uint32_t>());
  for (MPI_Datatype type : {MPI_LONG, MPI_LONG_LONG_INT, MPI_INT64_T,
                            MPI_INTEGER8, MPI_AINT, MPI_OFFSET, MPI_COUNT}) {
    add(type, IntegerRow<int64_t>());
  }
  for (MPI_Datatype type :
       {MPI_UNSIGNED_LONG, MPI_UNSIGNED_LONG_LONG, MPI_UINT64_T}) {
    add(type, IntegerRow<uint64_t>());
  }
  for (MPI_Datatype type : {MPI_FLOAT, MPI_REAL, MPI_REAL4})
    add(type, FloatRow<float>());
  for (MPI_Datatype type : {MPI_DOUBLE, MPI_DOUBLE_PRECISION, MPI_REAL8}) {
    add(type, FloatRow<double>());
  }
  add(MPI_LONG_DOUBLE, FloatRow<long double>());
  for (MPI_Datatype type : {MPI_C_BOOL, MPI_CXX_BOOL})
    add(type, LogicalRow<bool>());
  add(MPI_LOGICAL, LogicalRow<int32_t>());
  for (MPI_Datatype type : {MPI_C_FLOAT_COMPLEX, MPI_CXX_FLOAT_COMPLEX,
                            MPI_COMPLEX, MPI_COMPLEX8}) {
    add(type, ComplexRow<std::complex<float>>());
  }
  for (MPI_Datatype type : {MPI_C_DOUBLE_COMPLEX, MPI_CXX_DOUBLE_COMPLEX,
                            MPI_DOUBLE_COMPLEX, MPI_COMPLEX16}) {
    add(type, ComplexRow<std::complex<double>>());
  }
  for (MPI_Datatype type :
       {MPI_C_LONG_DOUBLE_COMPLEX, MPI_CXX_LONG_DOUBLE_COMPLEX}) {
    add(type, ComplexRow<std::complex<long double>>());
  }
  add(MPI_BYTE, BitwiseRow<uint8_t>());
  for (MPI_Datatype type : {MPI_PACKED, MPI_CHARACTER})
    add(type, AnyTypeRow<uint8_t>());
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
  static constexpr CompareSwapOp k1 = MakeCas<uint8_t>(),
                                 k2 = MakeCas<uint16_t>(),
                                 k4 = MakeCas<uint32_t>(),
                                 k8 = MakeCas<uint64_t>();
  const OpRow* row = RowFor(type);
  // CAS is defined for integer, logical and byte types: exactly the rows
  // with a bitwise or logical AND.
  if (row == nullptr || ((*row)[OpIndex(MPI_BAND)].plain == nullptr &&
                         (*row)[OpIndex(MPI_LAND)].plain == nullptr)) {
    return MPI_ERR_TYPE;
  }
  switch ((*row)[OpIndex(MPI_REPLACE)].size) {
    case 1:
      *out = &k1;
      return MPI_SUCCESS;
    case 2:
      *out = &k2;
      return MPI_SUCCESS;
    case 4:
      *out = &k4;
      return MPI_SUCCESS;
    case 8:
      *out = &k8;
      return MPI_SUCCESS;
  }
  return MPI_ERR_TYPE;
}

}  // namespace rmashim
