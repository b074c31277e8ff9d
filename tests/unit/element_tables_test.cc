// The element tables of shim/types/element_ops.h as the rest of the shim
// relies on them: the word lane's 8-byte integer types (mpich_abi.h) are
// exactly the table's 64-bit additions, and MPI_NO_OP reads no origin.
// Built into element_ops_test (tests/unit/BUILD), whose other file checks every
// kernel against a scalar reference.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "shim/base/mpich_abi.h"
#include "shim/types/element_ops.h"

namespace rmashim {
namespace {

// The word lane's types (shim/base/mpich_abi.h: IsWordIntegerType) against the
// tables, over every builtin handle of size 8: exactly the types whose
// MPI_SUM is 64-bit integer addition, each with MPI_REPLACE, MPI_NO_OP and
// an 8-byte compare-and-swap.
TEST(ElementOpsTest, WordIntegerTypesMatchTheTables) {
  std::mt19937_64 rng(17);
  int word_types = 0;
  for (uint32_t index = 0; index < 256; ++index) {
    const auto type = static_cast<MPI_Datatype>(0x4c000800u | index);
    const ElementOp* sum = BuiltinElementOp(type, MPI_SUM);
    bool adds = sum != nullptr && sum->size == 8 && sum->extent == 8;
    for (int k = 0; adds && k < 64; ++k) {
      const uint64_t a = rng(), b = rng();
      uint64_t target = a;
      sum->plain(reinterpret_cast<std::byte*>(&target),
                 reinterpret_cast<const std::byte*>(&b), nullptr, 1);
      adds = target == a + b;
    }
    EXPECT_EQ(IsWordIntegerType(type), adds)
        << "handle index 0x" << std::hex << index;
    if (!IsWordIntegerType(type)) continue;
    ++word_types;
    EXPECT_NE(BuiltinElementOp(type, MPI_REPLACE), nullptr);
    EXPECT_NE(BuiltinElementOp(type, MPI_NO_OP), nullptr);
    const CompareSwapOp* cas = BuiltinCompareSwap(type);
    ASSERT_NE(cas, nullptr);
    EXPECT_EQ(cas->size, 8);
  }
  // MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG_INT, MPI_UNSIGNED_LONG_LONG,
  // MPI_INTEGER8, MPI_INT64_T, MPI_UINT64_T, MPI_AINT, MPI_OFFSET, MPI_COUNT.
  EXPECT_EQ(word_types, 10);
}

// MPI_NO_OP with the target handed in as origin (what the accumulate path
// does) and with no origin at all.
TEST(ElementOpsTest, NoOpReadsNoOrigin) {
  const ElementOp* e = nullptr;
  ASSERT_EQ(FindElementOp(MPI_FLOAT, MPI_NO_OP, &e), MPI_SUCCESS);
  std::vector<float> target(67), result(67, -1.0f);
  for (size_t i = 0; i < target.size(); ++i)
    target[i] = static_cast<float>(i) * 1.5f;
  const std::vector<float> before = target;
  auto* t = reinterpret_cast<std::byte*>(target.data());
  e->plain(t, nullptr, reinterpret_cast<std::byte*>(result.data()),
           target.size());
  EXPECT_EQ(result, before);
  EXPECT_EQ(target, before);
  std::fill(result.begin(), result.end(), -1.0f);
  e->plain(t, t, reinterpret_cast<std::byte*>(result.data()), target.size());
  EXPECT_EQ(result, before);
  EXPECT_EQ(target, before);
}

}  // namespace
}  // namespace rmashim
