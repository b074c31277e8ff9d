#include "shim/datatype.h"

#include <cstring>
#include <vector>

namespace rmashim {

namespace {
MPI_Comm g_pack_comm = MPI_COMM_NULL;
}  // namespace

MPI_Comm PackComm() {
  return g_pack_comm != MPI_COMM_NULL ? g_pack_comm : MPI_COMM_SELF;
}

void StartDatatypeSupport() {
  if (g_pack_comm != MPI_COMM_NULL) return;
  PMPI_Comm_dup(MPI_COMM_SELF, &g_pack_comm);
  PMPI_Comm_set_errhandler(g_pack_comm, MPI_ERRORS_RETURN);
}

void StopDatatypeSupport() {
  if (g_pack_comm != MPI_COMM_NULL) PMPI_Comm_free(&g_pack_comm);
}

int DescribeLayout(int count, MPI_Datatype type, Layout* out) {
  if (count < 0) return MPI_ERR_COUNT;
  if (DescribeBuiltin(count, type, out)) return MPI_SUCCESS;
  if (type == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
  MPI_Count size = 0;
  int packed = 0;  // MPI_Pack_size rejects uncommitted types
  if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS ||
      PMPI_Pack_size(1, type, PackComm(), &packed) != MPI_SUCCESS) {
    return MPI_ERR_TYPE;
  }
  MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (PMPI_Type_get_extent_x(type, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent_x(type, &true_lb, &true_extent) != MPI_SUCCESS) {
    return MPI_ERR_TYPE;
  }
  out->bytes = static_cast<MPI_Aint>(size) * count;
  out->dense = false;  // derived types are copied by MPI's pack engine
  if (count == 0 || size == 0) {
    out->lo = out->hi = 0;
    return MPI_SUCCESS;
  }
  // Elements are `extent` apart; each touches [true_lb, true_lb + true_extent).
  const MPI_Aint stride_span = static_cast<MPI_Aint>(count - 1) * extent;
  out->lo = true_lb + (stride_span < 0 ? stride_span : 0);
  out->hi = true_lb + true_extent + (stride_span > 0 ? stride_span : 0);
  return MPI_SUCCESS;
}

int CopyTyped(const void* src, int src_count, MPI_Datatype src_type,
              const Layout& src_layout, void* dst, int dst_count,
              MPI_Datatype dst_type, const Layout& dst_layout) {
  const MPI_Aint bytes = src_layout.bytes;
  if (bytes == 0) return MPI_SUCCESS;
  if (src_layout.dense && dst_layout.dense) {
    std::memcpy(static_cast<char*>(dst) + dst_layout.lo,
                static_cast<const char*>(src) + src_layout.lo, bytes);
    return MPI_SUCCESS;
  }
  // MPICH's native pack format is the payload bytes in type-map order, so a
  // dense side can serve as the packed buffer and the other side is
  // packed/unpacked straight from/into it.
  int position = 0;
  if (src_layout.dense) {
    return PMPI_Unpack(static_cast<const char*>(src) + src_layout.lo,
                       static_cast<int>(bytes), &position, dst, dst_count,
                       dst_type, PackComm());
  }
  if (dst_layout.dense) {
    return PMPI_Pack(src, src_count, src_type,
                     static_cast<char*>(dst) + dst_layout.lo,
                     static_cast<int>(bytes), &position, PackComm());
  }
  std::vector<char> packed(static_cast<size_t>(bytes));
  int rc = PMPI_Pack(src, src_count, src_type, packed.data(),
                     static_cast<int>(bytes), &position, PackComm());
  if (rc != MPI_SUCCESS) return rc;
  position = 0;
  return PMPI_Unpack(packed.data(), static_cast<int>(bytes), &position, dst,
                     dst_count, dst_type, PackComm());
}

}  // namespace rmashim
