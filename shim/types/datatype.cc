// Datatype layouts and MPICH pack-engine copies with large counts (MPI_Count
// and the MPI-4 _c functions throughout: byte counts may exceed 2 GiB).
#include "shim/types/datatype.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>
#include <vector>

#include "shim/base/copy.h"
#include "shim/base/large_count_calls.h"

namespace rmashim {

namespace {

std::once_flag g_pack_comm_once;
MPI_Comm g_pack_comm = MPI_COMM_NULL;

// A buffer MPICH's pack engine accepts for (buf, count, type). MPI_BOTTOM is
// NULL, which MPI_Pack/Unpack refuse; it is handed over rebased, kRebase
// bytes up, with `count` x `type` wrapped in a struct type that places them
// kRebase bytes down: the bytes addressed are the same.
class PackableBuffer {
 public:
  PackableBuffer(const void* buf, int count, MPI_Datatype type)
      : buf_(const_cast<void*>(buf)), count_(count), type_(type) {
    if (buf != nullptr || count == 0) return;
    const MPI_Aint disp = -kRebase;
    if (PMPI_Type_create_struct(1, &count, &disp, &type, &wrapped_) !=
            MPI_SUCCESS ||
        PMPI_Type_commit(&wrapped_) != MPI_SUCCESS) {
      return;  // MPI will report the NULL buffer
    }
    buf_ = reinterpret_cast<void*>(kRebase);
    count_ = 1;
    type_ = wrapped_;
  }
  ~PackableBuffer() {
    if (wrapped_ != MPI_DATATYPE_NULL) PMPI_Type_free(&wrapped_);
  }
  PackableBuffer(const PackableBuffer&) = delete;
  PackableBuffer& operator=(const PackableBuffer&) = delete;

  void* buf() const { return buf_; }
  int count() const { return count_; }
  MPI_Datatype type() const { return type_; }

 private:
  static constexpr MPI_Aint kRebase = 4096;
  void* buf_;
  int count_;
  MPI_Datatype type_;
  MPI_Datatype wrapped_ = MPI_DATATYPE_NULL;
};

// MPI-3's MPI_Pack and MPI_Unpack count bytes in int (no PMPI_Pack_c,
// large_count_calls.h): `count` elements go in runs of at most INT_MAX
// bytes, each run from its own element onwards. One element larger than
// that, or a rebased MPI_BOTTOM buffer (one wrapped element) larger than
// that, cannot be expressed: MPI_ERR_COUNT.
template <typename MoveRun>
int InIntRuns(const PackableBuffer& buf, MPI_Aint bytes, MoveRun move_run) {
  if (bytes <= INT_MAX) {
    return move_run(buf.buf(), buf.count(), 0, static_cast<int>(bytes));
  }
  MPI_Count size = 0;
  MPI_Aint lb = 0, extent = 0;
  if (PMPI_Type_size_x(buf.type(), &size) != MPI_SUCCESS ||
      PMPI_Type_get_extent(buf.type(), &lb, &extent) != MPI_SUCCESS) {
    return MPI_ERR_TYPE;
  }
  if (size <= 0 || size > INT_MAX) return MPI_ERR_COUNT;
  const MPI_Aint per_run = INT_MAX / size;
  for (MPI_Aint first = 0; first < buf.count(); first += per_run) {
    const auto n = static_cast<int>(std::min(per_run, buf.count() - first));
    void* at = static_cast<char*>(buf.buf()) + first * extent;
    if (const int rc =
            move_run(at, n, first * size, static_cast<int>(n * size))) {
      return rc;
    }
  }
  return MPI_SUCCESS;
}

// Whether `type` is committed (MPI_Pack_size rejects uncommitted types).
bool Committed(MPI_Datatype type) {
  if (HasLargeCountCalls()) {
    MPI_Count packed = 0;
    return PMPI_Pack_size_c(1, type, PackComm(), &packed) == MPI_SUCCESS;
  }
  int packed = 0;
  return PMPI_Pack_size(1, type, PackComm(), &packed) == MPI_SUCCESS;
}

}  // namespace

MPI_Comm PackComm() {
  std::call_once(g_pack_comm_once, [] {
    PMPI_Comm_dup(MPI_COMM_SELF, &g_pack_comm);
    PMPI_Comm_set_errhandler(g_pack_comm, MPI_ERRORS_RETURN);
  });
  return g_pack_comm;
}

void StopDatatypeSupport() {
  if (g_pack_comm != MPI_COMM_NULL) PMPI_Comm_free(&g_pack_comm);
}

int PackBytes(const void* buf, int count, MPI_Datatype type, void* out,
              MPI_Aint bytes) {
  const PackableBuffer in(buf, count, type);
  if (HasLargeCountCalls()) {
    MPI_Count position = 0;
    return PMPI_Pack_c(in.buf(), in.count(), in.type(), out, bytes, &position,
                       PackComm());
  }
  return InIntRuns(
      in, bytes, [&](void* from, int n, MPI_Aint at, int run_bytes) {
        int position = 0;
        return PMPI_Pack(from, n, in.type(), static_cast<char*>(out) + at,
                         run_bytes, &position, PackComm());
      });
}

int UnpackBytes(const void* in, MPI_Aint bytes, void* buf, int count,
                MPI_Datatype type) {
  const PackableBuffer outbuf(buf, count, type);
  if (HasLargeCountCalls()) {
    MPI_Count position = 0;
    return PMPI_Unpack_c(in, bytes, &position, outbuf.buf(), outbuf.count(),
                         outbuf.type(), PackComm());
  }
  return InIntRuns(
      outbuf, bytes, [&](void* to, int n, MPI_Aint at, int run_bytes) {
        int position = 0;
        return PMPI_Unpack(static_cast<const char*>(in) + at, run_bytes,
                           &position, to, n, outbuf.type(), PackComm());
      });
}

int DescribeLayout(MPI_Count count, MPI_Datatype type, Layout* out) {
  if (count < 0) return MPI_ERR_COUNT;
  if (count <= INT_MAX && DescribeBuiltin(static_cast<int>(count), type, out)) {
    return MPI_SUCCESS;
  }
  if (type == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
  MPI_Count size = 0;
  if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || !Committed(type)) {
    return MPI_ERR_TYPE;
  }
  MPI_Count lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  if (PMPI_Type_get_extent_x(type, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent_x(type, &true_lb, &true_extent) !=
          MPI_SUCCESS) {
    return MPI_ERR_TYPE;
  }
  // Counts beyond int (MPI-4's large-count calls) may describe more bytes
  // than an address holds: MPI_ERR_COUNT, never a wrapped layout.
  MPI_Aint bytes = 0, stride_span = 0;
  if (__builtin_mul_overflow(static_cast<MPI_Aint>(size), count, &bytes)) {
    return MPI_ERR_COUNT;
  }
  out->bytes = bytes;
  out->dense = false;  // derived types are copied by MPI's pack engine
  if (count == 0 || size == 0) {
    out->lo = out->hi = 0;
    return MPI_SUCCESS;
  }
  // Elements are `extent` apart; each touches [true_lb, true_lb + true_extent).
  MPI_Aint lo = 0, hi = 0;
  if (__builtin_mul_overflow(static_cast<MPI_Aint>(count - 1),
                             static_cast<MPI_Aint>(extent), &stride_span) ||
      __builtin_add_overflow(static_cast<MPI_Aint>(true_lb),
                             stride_span < 0 ? stride_span : 0, &lo) ||
      __builtin_add_overflow(static_cast<MPI_Aint>(true_lb + true_extent),
                             stride_span > 0 ? stride_span : 0, &hi)) {
    return MPI_ERR_COUNT;
  }
  out->lo = lo;
  out->hi = hi;
  return MPI_SUCCESS;
}

int CopyTyped(const void* src, int src_count, MPI_Datatype src_type,
              const Layout& src_layout, void* dst, int dst_count,
              MPI_Datatype dst_type, const Layout& dst_layout) {
  const MPI_Aint bytes = src_layout.bytes;
  if (bytes == 0) return MPI_SUCCESS;
  if (src_layout.dense && dst_layout.dense) {
    CopyBytes(static_cast<char*>(dst) + dst_layout.lo,
              static_cast<const char*>(src) + src_layout.lo,
              static_cast<size_t>(bytes));
    return MPI_SUCCESS;
  }
  // MPICH's native pack format is the payload bytes in type-map order, so a
  // dense side can serve as the packed buffer and the other side is
  // packed/unpacked straight from/into it.
  if (src_layout.dense) {
    return UnpackBytes(static_cast<const char*>(src) + src_layout.lo, bytes,
                       dst, dst_count, dst_type);
  }
  if (dst_layout.dense) {
    return PackBytes(src, src_count, src_type,
                     static_cast<char*>(dst) + dst_layout.lo, bytes);
  }
  std::vector<char> packed(static_cast<size_t>(bytes));
  const int rc = PackBytes(src, src_count, src_type, packed.data(), bytes);
  if (rc != MPI_SUCCESS) return rc;
  return UnpackBytes(packed.data(), bytes, dst, dst_count, dst_type);
}

}  // namespace rmashim
