#include "shim/window.h"

#include <memory>
#include <new>

namespace rmashim {
namespace {

struct SizeAndUnit {
  MPI_Aint size;
  MPI_Aint disp_unit;
};

// Frees the info object when it leaves scope.
class ScopedInfo {
 public:
  ScopedInfo() { PMPI_Info_create(&info_); }
  ~ScopedInfo() { PMPI_Info_free(&info_); }
  MPI_Info get() const { return info_; }

 private:
  MPI_Info info_ = MPI_INFO_NULL;
};

}  // namespace

int ManagedWindow::Allocate(MPI_Aint size, int disp_unit, MPI_Info info,
                            MPI_Comm comm, void* baseptr,
                            ManagedWindow** out) {
  std::unique_ptr<ManagedWindow> w(new ManagedWindow);
  int comm_size = 0;
  PMPI_Comm_rank(comm, &w->rank_);
  PMPI_Comm_size(comm, &comm_size);
  int rc = PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                                &w->node_comm_);
  if (rc != MPI_SUCCESS) return rc;
  PMPI_Comm_size(w->node_comm_, &w->node_size_);

  // Each rank's segment: header page, then the window memory. Non-contiguous
  // so every segment is page-aligned and first-touched by its owner.
  void* segment = nullptr;
  const MPI_Aint header_bytes = HeaderBytes(comm_size);
  {
    ScopedInfo shm_info;
    PMPI_Info_set(shm_info.get(), "alloc_shared_noncontig", "true");
    rc = PMPI_Win_allocate_shared(header_bytes + size, 1, shm_info.get(),
                                  w->node_comm_, &segment, &w->shm_win_);
    if (rc != MPI_SUCCESS) return rc;
  }
  PMPI_Win_set_errhandler(w->shm_win_, MPI_ERRORS_RETURN);
  new (segment) SegmentHeader;
  for (int r = 0; r < comm_size; ++r) {
    new (static_cast<SegmentHeader*>(segment)->post_counters() + r)
        std::atomic<uint32_t>(0);
  }
  std::byte* my_base = static_cast<std::byte*>(segment) + header_bytes;

  rc = PMPI_Win_create(my_base, size, disp_unit, info, comm, &w->app_win_);
  if (rc != MPI_SUCCESS) return rc;

  // Every rank's size and displacement unit, for bounds checks and
  // shared_query; mapped bases for the node-local ones.
  std::vector<SizeAndUnit> all(comm_size);
  const SizeAndUnit mine{size, disp_unit};
  PMPI_Allgather(&mine, 2, MPI_AINT, all.data(), 2, MPI_AINT, comm);

  MPI_Group node_group;
  PMPI_Comm_group(comm, &w->group_);
  PMPI_Comm_group(w->node_comm_, &node_group);
  std::vector<int> comm_ranks(comm_size), node_ranks(comm_size);
  for (int r = 0; r < comm_size; ++r) comm_ranks[r] = r;
  PMPI_Group_translate_ranks(w->group_, comm_size, comm_ranks.data(),
                             node_group, node_ranks.data());
  PMPI_Group_free(&node_group);

  w->targets_.resize(comm_size);
  w->locks.resize(comm_size);
  for (int r = 0; r < comm_size; ++r) {
    Target& t = w->targets_[r];
    t.size = all[r].size;
    t.disp_unit = static_cast<int>(all[r].disp_unit);
    if (node_ranks[r] == MPI_UNDEFINED) continue;
    MPI_Aint seg_size = 0;
    int seg_unit = 0;
    void* seg_base = nullptr;
    PMPI_Win_shared_query(w->shm_win_, node_ranks[r], &seg_size, &seg_unit,
                          &seg_base);
    t.header = static_cast<SegmentHeader*>(seg_base);
    t.base = static_cast<std::byte*>(seg_base) + header_bytes;
  }

  if (w->node_size_ == comm_size) {
    rc = PMPI_Win_create(my_base, size, disp_unit, MPI_INFO_NULL, comm,
                         &w->internal_win_);
    if (rc != MPI_SUCCESS) return rc;
    PMPI_Win_set_errhandler(w->internal_win_, MPI_ERRORS_RETURN);
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, w->internal_win_);
  }
  // Headers are initialized before anyone may lock through them.
  PMPI_Barrier(w->node_comm_);

  *static_cast<void**>(baseptr) = my_base;
  *out = w.release();
  return MPI_SUCCESS;
}

ManagedWindow::~ManagedWindow() {
  if (app_win_ != MPI_WIN_NULL) PMPI_Win_free(&app_win_);
  if (internal_win_ != MPI_WIN_NULL) {
    PMPI_Win_unlock_all(internal_win_);
    PMPI_Win_free(&internal_win_);
  }
  if (shm_win_ != MPI_WIN_NULL) PMPI_Win_free(&shm_win_);
  if (node_comm_ != MPI_COMM_NULL) PMPI_Comm_free(&node_comm_);
  if (group_ != MPI_GROUP_NULL) PMPI_Group_free(&group_);
}

std::vector<int> ManagedWindow::ToWindowRanks(MPI_Group group) const {
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> in(n), out(n);
  for (int i = 0; i < n; ++i) in[i] = i;
  PMPI_Group_translate_ranks(group, n, in.data(), group_, out.data());
  return out;
}

}  // namespace rmashim
