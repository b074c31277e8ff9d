// DART data types and operations as MPI sees them: the basic DART_TYPE_*
// values, and derived (strided, indexed) types kept in a registry so a bad
// handle is an error, not a crash.
#ifndef RMASHIM_SHIM_DART_TYPES_H_
#define RMASHIM_SHIM_DART_TYPES_H_

#include <dart/dart_types.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace rmashim::dart {

// What a transfer needs to know about one side's type.
struct TypeInfo {
  MPI_Datatype mpi = MPI_DATATYPE_NULL;  // one instance
  dart_datatype_t base = DART_TYPE_UNDEFINED;
  MPI_Datatype base_mpi = MPI_DATATYPE_NULL;
  size_t elements = 1;   // base elements per instance
  size_t base_size = 0;  // bytes per base element
  bool basic = true;
};

inline bool IsBasic(dart_datatype_t t) {
  return t > DART_TYPE_UNDEFINED && t < DART_TYPE_LAST;
}

// Basic types: MPI type and size, no lookup beyond an array index.
MPI_Datatype BasicMpi(dart_datatype_t t);
size_t BasicSize(dart_datatype_t t);

// MPI_OP_NULL for DART_OP_UNDEFINED and out-of-range values.
MPI_Op MpiOp(dart_operation_t op);

// An operation from dart_op_create. MPI's user functions get no user
// pointer, so a reduction with one sets CurrentUserOp() (thread-local) for
// the duration of its MPI call, and MPI calls back through it.
struct UserOp {
  dart_operator_t fn = nullptr;
  void* userdata = nullptr;
  bool commute = true;
  dart_datatype_t dtype = DART_TYPE_UNDEFINED;
};
const UserOp*& CurrentUserOp();
// The operation behind `op` if it came from dart_op_create, else null.
const UserOp* FindUserOp(dart_operation_t op);
// The MPI operation that calls CurrentUserOp() (commutative or not).
MPI_Op UserMpiOp(bool commute);

class TypeRegistry {
 public:
  // Fills `out` for a basic or registered derived type; false for anything
  // else.
  bool Describe(dart_datatype_t t, TypeInfo* out) const;
  dart_ret_t CreateStrided(dart_datatype_t base, size_t stride, size_t blocklen,
                           dart_datatype_t* out);
  dart_ret_t CreateIndexed(dart_datatype_t base, size_t count,
                           const size_t blocklen[], const size_t offset[],
                           dart_datatype_t* out);
  dart_ret_t CreateCustom(size_t num_bytes, dart_datatype_t* out);
  dart_ret_t Destroy(dart_datatype_t* t);
  void Clear();  // frees every derived type (dart_exit)

 private:
  // `base` is a basic or custom type.
  dart_ret_t Register(dart_datatype_t base, MPI_Datatype instance,
                      size_t elements, dart_datatype_t* out);
  bool Element(dart_datatype_t t, MPI_Datatype* mpi, size_t* size) const;
  intptr_t next_handle_ = DART_TYPE_LAST + 1;
  std::unordered_map<dart_datatype_t, TypeInfo> derived_;
};

}  // namespace rmashim::dart

#endif  // RMASHIM_SHIM_DART_TYPES_H_
