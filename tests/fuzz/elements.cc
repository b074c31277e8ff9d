#include "tests/fuzz/elements.h"

#include <complex>
#include <cstdint>
#include <cstring>

namespace rma_fuzz {

const std::vector<ElemType>& ElemTypes() {
  static const std::vector<ElemType> types = {
      {"MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, 1, Repr::kInt, kCInt, 2},
      {"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, 1, Repr::kUint, kCInt, 2},
      {"MPI_SHORT", MPI_SHORT, 2, Repr::kInt, kCInt, 2},
      {"MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT, 2, Repr::kUint, kCInt, 1},
      {"MPI_INT", MPI_INT, 4, Repr::kInt, kCInt, 6},
      {"MPI_UNSIGNED", MPI_UNSIGNED, 4, Repr::kUint, kCInt, 2},
      {"MPI_LONG", MPI_LONG, 8, Repr::kInt, kCInt, 4},
      {"MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG, 8, Repr::kUint, kCInt, 1},
      {"MPI_LONG_LONG", MPI_LONG_LONG, 8, Repr::kInt, kCInt, 2},
      {"MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, 8, Repr::kUint, kCInt,
       1},
      {"MPI_INT8_T", MPI_INT8_T, 1, Repr::kInt, kCInt, 1},
      {"MPI_INT16_T", MPI_INT16_T, 2, Repr::kInt, kCInt, 1},
      {"MPI_INT32_T", MPI_INT32_T, 4, Repr::kInt, kCInt, 2},
      {"MPI_INT64_T", MPI_INT64_T, 8, Repr::kInt, kCInt, 4},
      {"MPI_UINT8_T", MPI_UINT8_T, 1, Repr::kUint, kCInt, 1},
      {"MPI_UINT16_T", MPI_UINT16_T, 2, Repr::kUint, kCInt, 1},
      {"MPI_UINT32_T", MPI_UINT32_T, 4, Repr::kUint, kCInt, 1},
      {"MPI_UINT64_T", MPI_UINT64_T, 8, Repr::kUint, kCInt, 2},
      {"MPI_INTEGER", MPI_INTEGER, 4, Repr::kInt, kFInt, 1},
      {"MPI_AINT", MPI_AINT, 8, Repr::kInt, kFInt, 1},
      {"MPI_OFFSET", MPI_OFFSET, 8, Repr::kInt, kFInt, 1},
      {"MPI_COUNT", MPI_COUNT, 8, Repr::kInt, kFInt, 1},
      {"MPI_FLOAT", MPI_FLOAT, 4, Repr::kFloat, kFloat, 3},
      {"MPI_DOUBLE", MPI_DOUBLE, 8, Repr::kDouble, kFloat, 6},
      {"MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, 16, Repr::kLongDouble, kFloat, 1},
      {"MPI_C_BOOL", MPI_C_BOOL, 1, Repr::kBool, kLogical, 1},
      {"MPI_LOGICAL", MPI_LOGICAL, 4, Repr::kLogical, kLogical, 1},
      {"MPI_BYTE", MPI_BYTE, 1, Repr::kByte, kByte, 2},
      {"MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, 8, Repr::kComplexF, kComplex,
       1},
      {"MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, 16, Repr::kComplexD,
       kComplex, 1},
      {"MPI_FLOAT_INT", MPI_FLOAT_INT, 8, Repr::kPairFloat, kPair, 1},
      {"MPI_DOUBLE_INT", MPI_DOUBLE_INT, 16, Repr::kPairDouble, kPair, 1},
      {"MPI_LONG_INT", MPI_LONG_INT, 16, Repr::kPairLong, kPair, 1},
      {"MPI_2INT", MPI_2INT, 8, Repr::kPairInt, kPair, 1},
      {"MPI_SHORT_INT", MPI_SHORT_INT, 8, Repr::kPairShort, kPair, 1},
      {"MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, 32, Repr::kPairLongDouble,
       kPair, 1},
  };
  return types;
}

namespace {

template <typename T>
void Put(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// A quarter-integer in [-64, 64]: sums of a few hundred of them are exact
// in float, so concurrent MPI_SUMs agree in any order. Never -0.
double Quarter(Rng& rng) {
  const int k = rng.Range(-256, 256);
  return k == 0 ? 0.0 : k * 0.25;
}

// Positive powers of two: products are exact in any order and never create
// -0 (which MPI_MIN/MPI_MAX could order either way against +0).
double ProdFactor(Rng& rng) {
  static const double kFactors[] = {1.0, 2.0, 0.5, 1.0};
  return kFactors[rng.Below(4)];
}

double FloatValue(Values v, Rng& rng) {
  return v == Values::kProd ? ProdFactor(rng) : Quarter(rng);
}

// Mostly small values (ties for MIN/MAX/MINLOC, interesting products),
// sometimes arbitrary bits.
uint64_t IntBits(Rng& rng) {
  switch (rng.Below(4)) {
    case 0:
    case 1:
      return static_cast<uint64_t>(static_cast<int64_t>(rng.Range(-5, 5)));
    case 2:
      return (uint64_t{1} << rng.Below(64)) - rng.Below(2);
    default:
      return rng.Next();
  }
}

int SmallInt(Rng& rng) { return rng.Range(-4, 4); }

}  // namespace

void MakeValue(const ElemType& e, Values v, Rng& rng, std::byte* out) {
  std::memset(out, 0x5a, e.extent);  // padding pattern
  switch (e.repr) {
    case Repr::kInt:
    case Repr::kUint: {
      const uint64_t bits = IntBits(rng);
      std::memcpy(out, &bits, e.extent);  // little endian: low bytes
      break;
    }
    case Repr::kFloat:
      Put(out, static_cast<float>(FloatValue(v, rng)));
      break;
    case Repr::kDouble:
      Put(out, FloatValue(v, rng));
      break;
    case Repr::kLongDouble: {
      const long double x = FloatValue(v, rng);
      std::memcpy(out, &x, 10);  // the 80-bit value; the rest is padding
      break;
    }
    case Repr::kBool:
      Put(out, static_cast<uint8_t>(rng.Below(2)));
      break;
    case Repr::kLogical:
      Put(out, static_cast<int32_t>(rng.Below(2)));
      break;
    case Repr::kByte:
      Put(out, static_cast<uint8_t>(rng.Next()));
      break;
    case Repr::kComplexF:
      Put(out, std::complex<float>(Quarter(rng) / 16, Quarter(rng) / 16));
      break;
    case Repr::kComplexD:
      Put(out, std::complex<double>(Quarter(rng) / 16, Quarter(rng) / 16));
      break;
    case Repr::kPairFloat:
      Put(out, static_cast<float>(SmallInt(rng)));
      Put(out + 4, rng.Range(0, 6));
      break;
    case Repr::kPairDouble:
      Put(out, static_cast<double>(SmallInt(rng)));
      Put(out + 8, rng.Range(0, 6));
      break;
    case Repr::kPairLong:
      Put(out, static_cast<long>(SmallInt(rng)));
      Put(out + 8, rng.Range(0, 6));
      break;
    case Repr::kPairInt:
      Put(out, SmallInt(rng));
      Put(out + 4, rng.Range(0, 6));
      break;
    case Repr::kPairShort:
      Put(out, static_cast<short>(SmallInt(rng)));
      Put(out + 4, rng.Range(0, 6));
      break;
    case Repr::kPairLongDouble: {
      const long double x = SmallInt(rng);
      std::memcpy(out, &x, 10);
      Put(out + 16, rng.Range(0, 6));
      break;
    }
  }
}

void MaskPadding(const ElemType& e, std::byte* p) {
  auto zero = [p](int from, int to) {
    std::memset(p + from, 0, static_cast<size_t>(to - from));
  };
  switch (e.repr) {
    case Repr::kLongDouble:
      zero(10, 16);
      break;
    case Repr::kPairDouble:
    case Repr::kPairLong:
      zero(12, 16);
      break;
    case Repr::kPairShort:
      zero(2, 4);
      break;
    case Repr::kPairLongDouble:
      zero(10, 16);
      zero(20, 32);
      break;
    default:
      break;
  }
}

std::vector<MPI_Op> AccumulateOps(const ElemType& e, bool concurrent) {
  std::vector<MPI_Op> ops;
  const unsigned g = e.group;
  const bool is_unsigned = e.repr == Repr::kUint;
  // MPICH 4.0.2 orders unsigned integers as signed ones in MPI_MAX/MPI_MIN
  // (tests/mpi/shim_accumulate_util.h: Scalar::ApplyAsMpich); the shim follows
  // MPI. A known departure, so left out here.
  if ((g & (kCInt | kFInt | kFloat)) && !is_unsigned) {
    ops.push_back(MPI_MAX);
    ops.push_back(MPI_MIN);
  }
  if (g & (kCInt | kFInt | kFloat)) {
    ops.push_back(MPI_SUM);
    ops.push_back(MPI_PROD);
  }
  if (g & kComplex) {
    ops.push_back(MPI_SUM);
    // Complex products round, so their order matters.
    if (!concurrent) ops.push_back(MPI_PROD);
  }
  if (g & (kCInt | kLogical)) {
    ops.push_back(MPI_LAND);
    ops.push_back(MPI_LOR);
    ops.push_back(MPI_LXOR);
  }
  if (g & (kCInt | kFInt | kByte)) {
    ops.push_back(MPI_BAND);
    ops.push_back(MPI_BOR);
    ops.push_back(MPI_BXOR);
  }
  if (g & kPair) {
    ops.push_back(MPI_MINLOC);
    ops.push_back(MPI_MAXLOC);
  }
  if (!concurrent) ops.push_back(MPI_REPLACE);
  return ops;
}

bool CompareSwapOk(const ElemType& e) {
  return (e.group & (kCInt | kFInt | kLogical | kByte)) != 0;
}

bool TicketOk(const ElemType& e) {
  return (e.group & (kCInt | kFInt)) != 0 || e.repr == Repr::kDouble ||
         e.repr == Repr::kFloat;
}

bool CounterOk(const ElemType& e) {
  return (e.repr == Repr::kInt || e.repr == Repr::kUint) && e.extent >= 4;
}

void AddDelta(const ElemType& e, std::byte* value, int delta) {
  if (e.extent == 4) {
    uint32_t v;
    std::memcpy(&v, value, 4);
    v += static_cast<uint32_t>(delta);
    std::memcpy(value, &v, 4);
  } else {
    uint64_t v;
    std::memcpy(&v, value, 8);
    v += static_cast<uint64_t>(static_cast<int64_t>(delta));
    std::memcpy(value, &v, 8);
  }
}

const char* OpName(MPI_Op op) {
  struct Named {
    MPI_Op op;
    const char* name;
  };
  static const Named kNames[] = {
      {MPI_MAX, "MPI_MAX"},         {MPI_MIN, "MPI_MIN"},
      {MPI_SUM, "MPI_SUM"},         {MPI_PROD, "MPI_PROD"},
      {MPI_LAND, "MPI_LAND"},       {MPI_LOR, "MPI_LOR"},
      {MPI_LXOR, "MPI_LXOR"},       {MPI_BAND, "MPI_BAND"},
      {MPI_BOR, "MPI_BOR"},         {MPI_BXOR, "MPI_BXOR"},
      {MPI_MINLOC, "MPI_MINLOC"},   {MPI_MAXLOC, "MPI_MAXLOC"},
      {MPI_REPLACE, "MPI_REPLACE"}, {MPI_NO_OP, "MPI_NO_OP"},
  };
  for (const Named& n : kNames) {
    if (n.op == op) return n.name;
  }
  return "MPI_OP_?";
}

}  // namespace rma_fuzz
