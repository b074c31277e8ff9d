#include "shim/dart/types.h"

#include <algorithm>
#include <climits>
#include <vector>

namespace rmashim::dart {
namespace {

struct Basic {
  MPI_Datatype mpi;
  size_t size;
};

const Basic& BasicEntry(dart_datatype_t t) {
  static const Basic kTable[] = {
      {MPI_DATATYPE_NULL, 0},
      {MPI_BYTE, 1},
      {MPI_SHORT, sizeof(short)},
      {MPI_INT, sizeof(int)},
      {MPI_UNSIGNED, sizeof(unsigned)},
      {MPI_LONG, sizeof(long)},
      {MPI_UNSIGNED_LONG, sizeof(unsigned long)},
      {MPI_LONG_LONG, sizeof(long long)},
      {MPI_UNSIGNED_LONG_LONG, sizeof(unsigned long long)},
      {MPI_FLOAT, sizeof(float)},
      {MPI_DOUBLE, sizeof(double)},
      {MPI_LONG_DOUBLE, sizeof(long double)},
  };
  static_assert(sizeof(kTable) / sizeof(kTable[0]) == DART_TYPE_LAST);
  return kTable[IsBasic(t) ? t : 0];
}

}  // namespace

MPI_Datatype BasicMpi(dart_datatype_t t) { return BasicEntry(t).mpi; }
size_t BasicSize(dart_datatype_t t) { return BasicEntry(t).size; }

MPI_Op MpiOp(dart_operation_t op) {
  switch (op) {
    case DART_OP_MIN:
      return MPI_MIN;
    case DART_OP_MAX:
      return MPI_MAX;
    case DART_OP_SUM:
      return MPI_SUM;
    case DART_OP_PROD:
      return MPI_PROD;
    case DART_OP_BAND:
      return MPI_BAND;
    case DART_OP_LAND:
      return MPI_LAND;
    case DART_OP_BOR:
      return MPI_BOR;
    case DART_OP_LOR:
      return MPI_LOR;
    case DART_OP_BXOR:
      return MPI_BXOR;
    case DART_OP_LXOR:
      return MPI_LXOR;
    case DART_OP_REPLACE:
      return MPI_REPLACE;
    case DART_OP_NO_OP:
      return MPI_NO_OP;
    default:
      return MPI_OP_NULL;
  }
}

bool TypeRegistry::Describe(dart_datatype_t t, TypeInfo* out) const {
  if (IsBasic(t)) {
    const Basic& b = BasicEntry(t);
    *out = TypeInfo{b.mpi, t, b.mpi, 1, b.size, true};
    return true;
  }
  auto it = derived_.find(t);
  if (it == derived_.end()) return false;
  *out = it->second;
  return true;
}

dart_ret_t TypeRegistry::Register(dart_datatype_t base, MPI_Datatype instance,
                                  size_t elements, dart_datatype_t* out) {
  if (PMPI_Type_commit(&instance) != MPI_SUCCESS) {
    PMPI_Type_free(&instance);
    return DART_ERR_OTHER;
  }
  const dart_datatype_t handle = next_handle_++;
  derived_[handle] = TypeInfo{instance,        base, BasicMpi(base), elements,
                              BasicSize(base), false};
  *out = handle;
  return DART_OK;
}

dart_ret_t TypeRegistry::CreateStrided(dart_datatype_t base, size_t stride,
                                       size_t blocklen, dart_datatype_t* out) {
  if (out == nullptr || !IsBasic(base) || blocklen == 0 || stride < blocklen ||
      blocklen > INT_MAX ||
      stride > static_cast<size_t>(LONG_MAX) / BasicSize(base)) {
    return DART_ERR_INVAL;
  }
  MPI_Datatype block, instance;
  if (PMPI_Type_contiguous(static_cast<int>(blocklen), BasicMpi(base),
                           &block) != MPI_SUCCESS) {
    return DART_ERR_OTHER;
  }
  // One block per instance; instances are `stride` elements apart.
  const int rc = PMPI_Type_create_resized(
      block, 0, static_cast<MPI_Aint>(stride * BasicSize(base)), &instance);
  PMPI_Type_free(&block);
  if (rc != MPI_SUCCESS) return DART_ERR_OTHER;
  return Register(base, instance, blocklen, out);
}

dart_ret_t TypeRegistry::CreateIndexed(dart_datatype_t base, size_t count,
                                       const size_t blocklen[],
                                       const size_t offset[],
                                       dart_datatype_t* out) {
  if (out == nullptr || !IsBasic(base) || count == 0 || count > INT_MAX ||
      blocklen == nullptr || offset == nullptr) {
    return DART_ERR_INVAL;
  }
  std::vector<int> lens(count), displs(count);
  size_t elements = 0, end = 0;
  for (size_t i = 0; i < count; ++i) {
    if (blocklen[i] > INT_MAX || offset[i] > INT_MAX ||
        offset[i] + blocklen[i] > INT_MAX) {
      return DART_ERR_INVAL;
    }
    lens[i] = static_cast<int>(blocklen[i]);
    displs[i] = static_cast<int>(offset[i]);
    elements += blocklen[i];
    if (blocklen[i] > 0) end = std::max(end, offset[i] + blocklen[i]);
  }
  if (elements == 0 || elements > INT_MAX) return DART_ERR_INVAL;
  MPI_Datatype indexed, instance;
  if (PMPI_Type_indexed(static_cast<int>(count), lens.data(), displs.data(),
                        BasicMpi(base), &indexed) != MPI_SUCCESS) {
    return DART_ERR_OTHER;
  }
  // Instances start at element 0 and are `end` elements wide.
  const int rc = PMPI_Type_create_resized(
      indexed, 0, static_cast<MPI_Aint>(end * BasicSize(base)), &instance);
  PMPI_Type_free(&indexed);
  if (rc != MPI_SUCCESS) return DART_ERR_OTHER;
  return Register(base, instance, elements, out);
}

dart_ret_t TypeRegistry::Destroy(dart_datatype_t* t) {
  if (t == nullptr) return DART_ERR_INVAL;
  auto it = derived_.find(*t);
  if (it == derived_.end()) return DART_ERR_INVAL;
  PMPI_Type_free(&it->second.mpi);
  derived_.erase(it);
  *t = DART_TYPE_UNDEFINED;
  return DART_OK;
}

void TypeRegistry::Clear() {
  for (auto& [handle, info] : derived_) PMPI_Type_free(&info.mpi);
  derived_.clear();
}

}  // namespace rmashim::dart
