// The definitions behind shim_accumulate_util.h: the table of predefined
// types and how operand values are made, combined and compared.
#include "tests/mpi/shim_accumulate_util.h"

#include <iomanip>
#include <sstream>

namespace rmashim_test::accumulate {
namespace {

template <typename Kind>
TypeCase Type(const char* name, MPI_Datatype type, unsigned group) {
  TypeCase t{name,
             type,
             group,
             Kind::kExtent,
             Kind::ValueSpans(),
             &Kind::Make,
             &Kind::Apply,
             &Kind::Apply,
             &Kind::Normalize};
  if constexpr (requires { Kind::kUnsigned; }) {
    t.apply_as_mpich = &Kind::ApplyAsMpich;
    t.unsigned_integer = Kind::kUnsigned;
  }
  return t;
}

uint64_t Mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The two integers a value of `type` for `op` is made from, chosen so the
// result of any combination order is exact and the same: small integers
// for arithmetic, ties for MINLOC/MAXLOC, canonical 0/1 for logical types.
std::pair<int64_t, int64_t> Seed(const TypeCase& type, MPI_Op op, uint64_t h) {
  static const int64_t kProd[] = {1, 2, 3, -1, -2};
  static const int64_t kImag[] = {0, 1, -1};
  static const int64_t kTruth[] = {1, 2, -3, 0, 5};
  if (type.group & kLogical) return {static_cast<int64_t>(h % 4 != 0), 0};
  if (op == MPI_SUM) return {static_cast<int64_t>(h % 9) + 1, h / 9 % 5};
  if (op == MPI_PROD) return {kProd[h % 5], kImag[h / 5 % 3]};
  if (op == MPI_MAX || op == MPI_MIN) {
    return {static_cast<int64_t>(h % 41) - 20, 0};
  }
  if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) {
    return {kTruth[h % 5], 0};
  }
  if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR) {
    return {static_cast<int64_t>(h), 0};
  }
  if (op == MPI_MINLOC || op == MPI_MAXLOC) {
    return {static_cast<int64_t>(h % 3), static_cast<int64_t>(h / 3 % 7)};
  }
  return {static_cast<int64_t>(h % 100), static_cast<int64_t>(h / 100 % 100)};
}

std::string Hex(const TypeCase& type, const std::byte* p) {
  std::ostringstream s;
  for (const auto& [offset, length] : type.spans) {
    s << (offset ? " " : "") << std::hex << std::setfill('0');
    for (int b = length - 1; b >= 0; --b) {
      s << std::setw(2) << std::to_integer<int>(p[offset + b]);
    }
  }
  return s.str();
}

}  // namespace

bool MpiOrdersUnsignedAsSigned() {
  static const bool as_signed = [] {
    const unsigned char in = 0xf1;
    unsigned char inout = 0x12;
    MPI_Reduce_local(&in, &inout, 1, MPI_UNSIGNED_CHAR, MPI_MAX);
    return inout == 0x12;
  }();
  return as_signed;
}

bool MpichDeparts(const TypeCase& type, MPI_Op op) {
  return type.unsigned_integer && (op == MPI_MAX || op == MPI_MIN) &&
         MpiOrdersUnsignedAsSigned();
}

const std::vector<TypeCase>& Types() {
  static const std::vector<TypeCase> types = {
      Type<Scalar<int8_t>>("MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, kCInteger),
      Type<Scalar<uint8_t>>("MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, kCInteger),
      Type<Scalar<int16_t>>("MPI_SHORT", MPI_SHORT, kCInteger),
      Type<Scalar<uint16_t>>("MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT,
                             kCInteger),
      Type<Scalar<int32_t>>("MPI_INT", MPI_INT, kCInteger),
      Type<Scalar<uint32_t>>("MPI_UNSIGNED", MPI_UNSIGNED, kCInteger),
      Type<Scalar<long>>("MPI_LONG", MPI_LONG, kCInteger),
      Type<Scalar<unsigned long>>("MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG,
                                  kCInteger),
      Type<Scalar<long long>>("MPI_LONG_LONG", MPI_LONG_LONG, kCInteger),
      Type<Scalar<unsigned long long>>("MPI_UNSIGNED_LONG_LONG",
                                       MPI_UNSIGNED_LONG_LONG, kCInteger),
      Type<Scalar<int8_t>>("MPI_INT8_T", MPI_INT8_T, kCInteger),
      Type<Scalar<int16_t>>("MPI_INT16_T", MPI_INT16_T, kCInteger),
      Type<Scalar<int32_t>>("MPI_INT32_T", MPI_INT32_T, kCInteger),
      Type<Scalar<int64_t>>("MPI_INT64_T", MPI_INT64_T, kCInteger),
      Type<Scalar<uint8_t>>("MPI_UINT8_T", MPI_UINT8_T, kCInteger),
      Type<Scalar<uint16_t>>("MPI_UINT16_T", MPI_UINT16_T, kCInteger),
      Type<Scalar<uint32_t>>("MPI_UINT32_T", MPI_UINT32_T, kCInteger),
      Type<Scalar<uint64_t>>("MPI_UINT64_T", MPI_UINT64_T, kCInteger),
      Type<Scalar<int32_t>>("MPI_INTEGER", MPI_INTEGER, kFortranInteger),
      Type<Scalar<MPI_Aint>>("MPI_AINT", MPI_AINT, kFortranInteger),
      Type<Scalar<MPI_Offset>>("MPI_OFFSET", MPI_OFFSET, kFortranInteger),
      Type<Scalar<MPI_Count>>("MPI_COUNT", MPI_COUNT, kFortranInteger),
      Type<Scalar<float>>("MPI_FLOAT", MPI_FLOAT, kFloating),
      Type<Scalar<double>>("MPI_DOUBLE", MPI_DOUBLE, kFloating),
      Type<Scalar<long double>>("MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, kFloating),
      Type<Scalar<float>>("MPI_REAL", MPI_REAL, kFloating),
      Type<Scalar<double>>("MPI_DOUBLE_PRECISION", MPI_DOUBLE_PRECISION,
                           kFloating),
      Type<Scalar<bool>>("MPI_C_BOOL", MPI_C_BOOL, kLogical),
      Type<Scalar<bool>>("MPI_CXX_BOOL", MPI_CXX_BOOL, kLogical),
      Type<Scalar<int32_t>>("MPI_LOGICAL", MPI_LOGICAL, kLogical),
      Type<Complex<float>>("MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX,
                           kComplex),
      Type<Complex<double>>("MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX,
                            kComplex),
      Type<Complex<long double>>("MPI_C_LONG_DOUBLE_COMPLEX",
                                 MPI_C_LONG_DOUBLE_COMPLEX, kComplex),
      Type<Complex<double>>("MPI_CXX_DOUBLE_COMPLEX", MPI_CXX_DOUBLE_COMPLEX,
                            kComplex),
      Type<Complex<float>>("MPI_COMPLEX", MPI_COMPLEX, kComplex),
      Type<Complex<double>>("MPI_DOUBLE_COMPLEX", MPI_DOUBLE_COMPLEX, kComplex),
      Type<Scalar<uint8_t>>("MPI_BYTE", MPI_BYTE, kByte),
      Type<Pair<float, int>>("MPI_FLOAT_INT", MPI_FLOAT_INT, kPair),
      Type<Pair<double, int>>("MPI_DOUBLE_INT", MPI_DOUBLE_INT, kPair),
      Type<Pair<long, int>>("MPI_LONG_INT", MPI_LONG_INT, kPair),
      Type<Pair<int, int>>("MPI_2INT", MPI_2INT, kPair),
      Type<Pair<short, int>>("MPI_SHORT_INT", MPI_SHORT_INT, kPair),
      Type<Pair<long double, int>>("MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT,
                                   kPair),
  };
  return types;
}

const TypeCase& TypeNamed(const std::string& name) {
  for (const TypeCase& t : Types()) {
    if (name == t.name) return t;
  }
  ADD_FAILURE() << "no type " << name;
  return Types()[0];
}

std::vector<std::byte> Values(const TypeCase& type, MPI_Op op, int who,
                              int entry, Role role, int n, int salt) {
  std::vector<std::byte> v(static_cast<size_t>(n) * type.extent);
  for (int i = 0; i < n; ++i) {
    const uint64_t h = Mix((uint64_t(who) << 48) ^ (uint64_t(entry) << 24) ^
                           (uint64_t(salt) << 16) ^ (uint64_t(i) << 4) ^ role);
    const auto [a, b] = Seed(type, op, h);
    type.make(v.data() + static_cast<size_t>(i) * type.extent, a, b);
  }
  return v;
}

// Element-wise `target = target op origin` on n elements.
void ApplyAll(const TypeCase& type, MPI_Op op, std::byte* target,
              const std::byte* origin, int n, bool as_mpich) {
  for (int i = 0; i < n; ++i) {
    (as_mpich ? type.apply_as_mpich : type.apply)(op, target + i * type.extent,
                                                  origin + i * type.extent);
  }
}

std::string Diff(const TypeCase& type, const std::byte* got,
                 const std::byte* want, int n, const std::string& what) {
  std::vector<std::byte> g(type.extent), w(type.extent);
  for (int i = 0; i < n; ++i) {
    std::memcpy(g.data(), got + i * type.extent, type.extent);
    std::memcpy(w.data(), want + i * type.extent, type.extent);
    type.normalize(g.data());
    type.normalize(w.data());
    for (const auto& [offset, length] : type.spans) {
      if (std::memcmp(g.data() + offset, w.data() + offset, length) != 0) {
        return what + " element " + std::to_string(i) + ": got " +
               Hex(type, g.data()) + ", want " + Hex(type, w.data());
      }
    }
  }
  return "";
}

}  // namespace rmashim_test::accumulate
