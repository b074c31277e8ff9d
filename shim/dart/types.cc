#include "shim/dart/types.h"

#include <algorithm>
#include <climits>
#include <mutex>
#include <unordered_set>
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

bool TypeRegistry::Element(dart_datatype_t t, MPI_Datatype* mpi,
                           size_t* size) const {
  if (IsBasic(t)) {
    *mpi = BasicMpi(t);
    *size = BasicSize(t);
    return true;
  }
  auto it = derived_.find(t);
  if (it == derived_.end() || it->second.base != t) return false;  // custom
  *mpi = it->second.mpi;
  *size = it->second.base_size;
  return true;
}

dart_ret_t TypeRegistry::Register(dart_datatype_t base, MPI_Datatype instance,
                                  size_t elements, dart_datatype_t* out) {
  if (PMPI_Type_commit(&instance) != MPI_SUCCESS) {
    PMPI_Type_free(&instance);
    return DART_ERR_OTHER;
  }
  MPI_Datatype base_mpi = MPI_DATATYPE_NULL;
  size_t base_size = 0;
  const dart_datatype_t handle = next_handle_++;
  if (base == DART_TYPE_UNDEFINED) {  // a custom type is its own base
    base = handle;
    base_mpi = instance;
    MPI_Count bytes = 0;
    PMPI_Type_size_c(instance, &bytes);
    base_size = static_cast<size_t>(bytes);
  } else {
    Element(base, &base_mpi, &base_size);
  }
  derived_[handle] =
      TypeInfo{instance, base, base_mpi, elements, base_size, false};
  *out = handle;
  return DART_OK;
}

dart_ret_t TypeRegistry::CreateCustom(size_t num_bytes, dart_datatype_t* out) {
  if (out == nullptr || num_bytes == 0 || num_bytes > INT_MAX) {
    return DART_ERR_INVAL;
  }
  MPI_Datatype instance;
  if (PMPI_Type_contiguous(static_cast<int>(num_bytes), MPI_BYTE, &instance) !=
      MPI_SUCCESS) {
    return DART_ERR_OTHER;
  }
  return Register(DART_TYPE_UNDEFINED, instance, 1, out);
}

dart_ret_t TypeRegistry::CreateStrided(dart_datatype_t base, size_t stride,
                                       size_t blocklen, dart_datatype_t* out) {
  MPI_Datatype base_mpi;
  size_t base_size = 0;
  if (out == nullptr || !Element(base, &base_mpi, &base_size) ||
      blocklen == 0 || stride < blocklen || blocklen > INT_MAX ||
      stride > static_cast<size_t>(LONG_MAX) / base_size) {
    return DART_ERR_INVAL;
  }
  MPI_Datatype block, instance;
  if (PMPI_Type_contiguous(static_cast<int>(blocklen), base_mpi, &block) !=
      MPI_SUCCESS) {
    return DART_ERR_OTHER;
  }
  // One block per instance; instances are `stride` elements apart.
  const int rc = PMPI_Type_create_resized(
      block, 0, static_cast<MPI_Aint>(stride * base_size), &instance);
  PMPI_Type_free(&block);
  if (rc != MPI_SUCCESS) return DART_ERR_OTHER;
  return Register(base, instance, blocklen, out);
}

dart_ret_t TypeRegistry::CreateIndexed(dart_datatype_t base, size_t count,
                                       const size_t blocklen[],
                                       const size_t offset[],
                                       dart_datatype_t* out) {
  MPI_Datatype base_mpi;
  size_t base_size = 0;
  if (out == nullptr || !Element(base, &base_mpi, &base_size) || count == 0 ||
      count > INT_MAX || blocklen == nullptr || offset == nullptr) {
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
                        base_mpi, &indexed) != MPI_SUCCESS) {
    return DART_ERR_OTHER;
  }
  // Instances start at element 0 and are `end` elements wide.
  const int rc = PMPI_Type_create_resized(
      indexed, 0, static_cast<MPI_Aint>(end * base_size), &instance);
  PMPI_Type_free(&indexed);
  if (rc != MPI_SUCCESS) return DART_ERR_OTHER;
  return Register(base, instance, elements, out);
}

const UserOp*& CurrentUserOp() {
  thread_local const UserOp* op = nullptr;
  return op;
}

namespace {

std::mutex& UserOpMutex() {
  static std::mutex mu;
  return mu;
}
std::unordered_set<const UserOp*>& UserOps() {
  static std::unordered_set<const UserOp*> ops;
  return ops;
}

void CallUserOp(void* in, void* inout, int* len, MPI_Datatype*) {
  const UserOp* op = CurrentUserOp();
  if (op != nullptr) op->fn(in, inout, static_cast<size_t>(*len), op->userdata);
}

}  // namespace

const UserOp* FindUserOp(dart_operation_t op) {
  if (op < DART_OP_LAST) return nullptr;
  const auto* p = reinterpret_cast<const UserOp*>(op);
  std::lock_guard<std::mutex> lock(UserOpMutex());
  return UserOps().count(p) != 0 ? p : nullptr;
}

MPI_Op UserMpiOp(bool commute) {
  // Made once per process; MPI frees them at MPI_Finalize.
  static MPI_Op ops[2] = {MPI_OP_NULL, MPI_OP_NULL};
  static std::once_flag once;
  std::call_once(once, [] {
    PMPI_Op_create(&CallUserOp, 0, &ops[0]);
    PMPI_Op_create(&CallUserOp, 1, &ops[1]);
  });
  return ops[commute ? 1 : 0];
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

using namespace rmashim::dart;

extern "C" {

dart_ret_t dart_op_create(dart_operator_t op, void* userdata, bool commute,
                          dart_datatype_t dtype, bool dtype_is_tmp,
                          dart_operation_t* new_op) {
  (void)dtype_is_tmp;
  if (op == nullptr || new_op == nullptr) return DART_ERR_INVAL;
  auto* u = new UserOp{op, userdata, commute, dtype};
  {
    std::lock_guard<std::mutex> lock(UserOpMutex());
    UserOps().insert(u);
  }
  *new_op = reinterpret_cast<dart_operation_t>(u);
  return DART_OK;
}

dart_ret_t dart_op_destroy(dart_operation_t* op) {
  if (op == nullptr) return DART_ERR_INVAL;
  const auto* u = reinterpret_cast<const UserOp*>(*op);
  {
    std::lock_guard<std::mutex> lock(UserOpMutex());
    if (*op < DART_OP_LAST || UserOps().erase(u) == 0) return DART_ERR_INVAL;
  }
  delete u;
  *op = DART_OP_UNDEFINED;
  return DART_OK;
}

}  // extern "C"
