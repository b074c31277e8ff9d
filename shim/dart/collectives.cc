// Collectives over a team's communicator and two-sided messages between
// global units: MPI's (large-count forms), after argument checks.
#include <algorithm>
#include <climits>
#include <mutex>
#include <vector>

#include "shim/agent/stand_in_wait.h"
#include "shim/dart/state.h"

namespace rmashim::dart {
namespace {

// `nelem` elements of `dtype` as MPI count and type.
bool AsMpi(size_t nelem, dart_datatype_t dtype, MPI_Count* count,
           MPI_Datatype* type) {
  TypeInfo t;
  {
    LockGuard guard;  // other threads may create or destroy types
    if (!g_dart.types.Describe(dtype, &t)) return false;
  }
  if (nelem % t.elements != 0) return false;
  *count = static_cast<MPI_Count>(nelem / t.elements);
  *type = t.mpi;
  return true;
}

bool Buffer(const void* buf, size_t nelem) {
  return buf != nullptr || nelem == 0;
}

// Team, count and type of a collective call; null team on bad input.
struct Call {
  Team* team = nullptr;
  MPI_Count count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};

dart_ret_t Prepare(dart_team_t teamid, size_t nelem, dart_datatype_t dtype,
                   Call* c) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  c->team = FindTeam(teamid);
  if (c->team == nullptr || !AsMpi(nelem, dtype, &c->count, &c->type)) {
    return DART_ERR_INVAL;
  }
  return DART_OK;
}

bool ValidRoot(const Call& c, dart_team_unit_t root) {
  return root.id >= 0 && root.id < c.team->size;
}

// DART_OP_MINMAX reduces (min, max) pairs. MPI may hand a user op any
// whole number of elements, so the elements are pairs: a contiguous type of
// two basic values, one per basic type, created on first use and freed by
// dart_exit.
struct PairType {
  MPI_Datatype basic, pair;
};
std::vector<PairType>& PairTypes() {
  static std::vector<PairType> types;
  return types;
}

std::mutex& PairMutex() {
  static std::mutex mu;
  return mu;
}

MPI_Datatype PairOf(MPI_Datatype basic) {
  std::lock_guard<std::mutex> lock(PairMutex());
  for (const PairType& p : PairTypes()) {
    if (p.basic == basic) return p.pair;
  }
  MPI_Datatype pair;
  PMPI_Type_contiguous(2, basic, &pair);
  PMPI_Type_commit(&pair);
  PairTypes().push_back({basic, pair});
  return pair;
}

template <typename T>
void MinMaxPairs(const void* in, void* inout, int pairs) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < 2 * pairs; i += 2) {
    b[i + DART_OP_MINMAX_MIN] =
        std::min(a[i + DART_OP_MINMAX_MIN], b[i + DART_OP_MINMAX_MIN]);
    b[i + DART_OP_MINMAX_MAX] =
        std::max(a[i + DART_OP_MINMAX_MAX], b[i + DART_OP_MINMAX_MAX]);
  }
}

void MinMax(void* in, void* inout, int* len, MPI_Datatype* type) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  {
    std::lock_guard<std::mutex> lock(PairMutex());
    for (const PairType& p : PairTypes()) {
      if (p.pair == *type) t = p.basic;
    }
  }
  if (t == MPI_BYTE) {
    MinMaxPairs<unsigned char>(in, inout, *len);
  } else if (t == MPI_SHORT) {
    MinMaxPairs<short>(in, inout, *len);
  } else if (t == MPI_INT) {
    MinMaxPairs<int>(in, inout, *len);
  } else if (t == MPI_UNSIGNED) {
    MinMaxPairs<unsigned>(in, inout, *len);
  } else if (t == MPI_LONG) {
    MinMaxPairs<long>(in, inout, *len);
  } else if (t == MPI_UNSIGNED_LONG) {
    MinMaxPairs<unsigned long>(in, inout, *len);
  } else if (t == MPI_LONG_LONG) {
    MinMaxPairs<long long>(in, inout, *len);
  } else if (t == MPI_UNSIGNED_LONG_LONG) {
    MinMaxPairs<unsigned long long>(in, inout, *len);
  } else if (t == MPI_FLOAT) {
    MinMaxPairs<float>(in, inout, *len);
  } else if (t == MPI_DOUBLE) {
    MinMaxPairs<double>(in, inout, *len);
  } else if (t == MPI_LONG_DOUBLE) {
    MinMaxPairs<long double>(in, inout, *len);
  }
}

MPI_Op MinMaxOp() {
  static const MPI_Op op = [] {
    MPI_Op created;
    PMPI_Op_create(MinMax, /*commute=*/1, &created);
    return created;
  }();
  return op;
}

// A reduction's MPI form. Reductions take basic types and the arithmetic/
// logical operations only; DART_OP_MINMAX takes whole pairs.
struct Reduction {
  MPI_Op op = MPI_OP_NULL;
  MPI_Count count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  const UserOp* user = nullptr;
};

// Sets CurrentUserOp() for one MPI reduction call.
class UserOpScope {
 public:
  explicit UserOpScope(const UserOp* op) : saved_(CurrentUserOp()) {
    CurrentUserOp() = op;
  }
  ~UserOpScope() { CurrentUserOp() = saved_; }

 private:
  const UserOp* saved_;
};

bool AsReduction(const Call& c, dart_datatype_t dtype, dart_operation_t op,
                 Reduction* r) {
  if (const UserOp* u = FindUserOp(op)) {
    // A user operation: MPI calls it back through CurrentUserOp().
    *r = {UserMpiOp(u->commute), c.count, c.type};
    r->user = u;
    return true;
  }
  if (!IsBasic(dtype) || op == DART_OP_REPLACE || op == DART_OP_NO_OP) {
    return false;
  }
  if (op != DART_OP_MINMAX) {
    *r = {MpiOp(op), c.count, c.type};
    return r->op != MPI_OP_NULL;
  }
  if (c.count % 2 != 0) return false;
  *r = {MinMaxOp(), c.count / 2, PairOf(c.type)};
  return true;
}

bool ValidUnit(dart_global_unit_t u) { return u.id >= 0 && u.id < g_dart.size; }

}  // namespace

void FreePairTypes() {
  std::lock_guard<std::mutex> lock(PairMutex());
  for (PairType& p : PairTypes()) PMPI_Type_free(&p.pair);
  PairTypes().clear();
}

}  // namespace rmashim::dart

using namespace rmashim;
using namespace rmashim::dart;

extern "C" {

dart_ret_t dart_barrier(dart_team_t team) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  Team* t = FindTeam(team);
  if (t == nullptr) return DART_ERR_INVAL;
  // Serves the core's agent while it waits, where one runs.
  return FromMpi(BarrierStandingIn(t->comm));
}

dart_ret_t dart_bcast(void* buf, size_t nelem, dart_datatype_t dtype,
                      dart_team_unit_t root, dart_team_t team) {
  Call c;
  if (dart_ret_t rc = Prepare(team, nelem, dtype, &c)) return rc;
  if (!ValidRoot(c, root) || !Buffer(buf, nelem)) return DART_ERR_INVAL;
  return FromMpi(PMPI_Bcast_c(buf, c.count, c.type, root.id, c.team->comm));
}

dart_ret_t dart_scatter(const void* sendbuf, void* recvbuf, size_t nelem,
                        dart_datatype_t dtype, dart_team_unit_t root,
                        dart_team_t team) {
  Call c;
  if (dart_ret_t rc = Prepare(team, nelem, dtype, &c)) return rc;
  if (!ValidRoot(c, root) || !Buffer(recvbuf, nelem) ||
      (root.id == c.team->myid && !Buffer(sendbuf, nelem))) {
    return DART_ERR_INVAL;
  }
  return FromMpi(PMPI_Scatter_c(sendbuf, c.count, c.type, recvbuf, c.count,
                                c.type, root.id, c.team->comm));
}

dart_ret_t dart_gather(const void* sendbuf, void* recvbuf, size_t nelem,
                       dart_datatype_t dtype, dart_team_unit_t root,
                       dart_team_t team) {
  Call c;
  if (dart_ret_t rc = Prepare(team, nelem, dtype, &c)) return rc;
  if (!ValidRoot(c, root) || !Buffer(sendbuf, nelem) ||
      (root.id == c.team->myid && !Buffer(recvbuf, nelem))) {
    return DART_ERR_INVAL;
  }
  return FromMpi(PMPI_Gather_c(sendbuf, c.count, c.type, recvbuf, c.count,
                               c.type, root.id, c.team->comm));
}

dart_ret_t dart_allgather(const void* sendbuf, void* recvbuf, size_t nelem,
                          dart_datatype_t dtype, dart_team_t team) {
  Call c;
  if (dart_ret_t rc = Prepare(team, nelem, dtype, &c)) return rc;
  if (!Buffer(sendbuf, nelem) || !Buffer(recvbuf, nelem)) {
    return DART_ERR_INVAL;
  }
  return FromMpi(PMPI_Allgather_c(sendbuf, c.count, c.type, recvbuf, c.count,
                                  c.type, c.team->comm));
}

dart_ret_t dart_allgatherv(const void* sendbuf, size_t nsendelem,
                           dart_datatype_t dtype, void* recvbuf,
                           const size_t* nrecvelem, const size_t* recvdispls,
                           dart_team_t teamid) {
  Call c;
  if (dart_ret_t rc = Prepare(teamid, nsendelem, dtype, &c)) return rc;
  if (!Buffer(sendbuf, nsendelem) || nrecvelem == nullptr ||
      recvdispls == nullptr) {
    return DART_ERR_INVAL;
  }
  const int n = c.team->size;
  std::vector<MPI_Count> counts(n);
  std::vector<MPI_Aint> displs(n);
  size_t total = 0;
  for (int i = 0; i < n; ++i) {
    MPI_Datatype ignored;
    MPI_Count displ = 0;
    if (!AsMpi(nrecvelem[i], dtype, &counts[i], &ignored) ||
        !AsMpi(recvdispls[i], dtype, &displ, &ignored)) {
      return DART_ERR_INVAL;
    }
    displs[i] = static_cast<MPI_Aint>(displ);
    total += nrecvelem[i];
  }
  if (!Buffer(recvbuf, total)) return DART_ERR_INVAL;
  if (n == 1) {
    // MPICH 4.0.2 ignores the displacement on a single-process
    // communicator: place the block ourselves.
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(c.type, &lb, &extent);
    return FromMpi(PMPI_Sendrecv_c(
        sendbuf, c.count, c.type, 0, 0,
        static_cast<char*>(recvbuf) + displs[0] * extent, counts[0], c.type, 0,
        0, MPI_COMM_SELF, MPI_STATUS_IGNORE));
  }
  // MPICH's int-count form when everything fits.
  bool fits = c.count <= INT_MAX;
  for (int i = 0; i < n; ++i) {
    fits = fits && counts[i] <= INT_MAX && displs[i] <= INT_MAX;
  }
  if (fits) {
    std::vector<int> icounts(counts.begin(), counts.end());
    std::vector<int> idispls(displs.begin(), displs.end());
    return FromMpi(PMPI_Allgatherv(sendbuf, static_cast<int>(c.count), c.type,
                                   recvbuf, icounts.data(), idispls.data(),
                                   c.type, c.team->comm));
  }
  return FromMpi(PMPI_Allgatherv_c(sendbuf, c.count, c.type, recvbuf,
                                   counts.data(), displs.data(), c.type,
                                   c.team->comm));
}

dart_ret_t dart_allreduce(const void* sendbuf, void* recvbuf, size_t nelem,
                          dart_datatype_t dtype, dart_operation_t op,
                          dart_team_t team) {
  Call c;
  if (dart_ret_t rc = Prepare(team, nelem, dtype, &c)) return rc;
  Reduction r;
  if (!AsReduction(c, dtype, op, &r) || !Buffer(sendbuf, nelem) ||
      !Buffer(recvbuf, nelem)) {
    return DART_ERR_INVAL;
  }
  if (sendbuf == recvbuf && nelem > 0) sendbuf = MPI_IN_PLACE;
  UserOpScope scope(r.user);
  return FromMpi(
      PMPI_Allreduce_c(sendbuf, recvbuf, r.count, r.type, r.op, c.team->comm));
}

dart_ret_t dart_reduce(const void* sendbuf, void* recvbuf, size_t nelem,
                       dart_datatype_t dtype, dart_operation_t op,
                       dart_team_unit_t root, dart_team_t team) {
  Call c;
  if (dart_ret_t rc = Prepare(team, nelem, dtype, &c)) return rc;
  Reduction r;
  const bool is_root = root.id == c.team->myid;
  if (!AsReduction(c, dtype, op, &r) || !ValidRoot(c, root) ||
      !Buffer(sendbuf, nelem) || (is_root && !Buffer(recvbuf, nelem))) {
    return DART_ERR_INVAL;
  }
  if (is_root && sendbuf == recvbuf && nelem > 0) sendbuf = MPI_IN_PLACE;
  UserOpScope scope(r.user);
  return FromMpi(PMPI_Reduce_c(sendbuf, recvbuf, r.count, r.type, r.op, root.id,
                               c.team->comm));
}

dart_ret_t dart_alltoall(const void* sendbuf, void* recvbuf, size_t nelem,
                         dart_datatype_t dtype, dart_team_t team) {
  Call c;
  if (dart_ret_t rc = Prepare(team, nelem, dtype, &c)) return rc;
  if (!Buffer(sendbuf, nelem) || !Buffer(recvbuf, nelem)) {
    return DART_ERR_INVAL;
  }
  return FromMpi(PMPI_Alltoall_c(sendbuf, c.count, c.type, recvbuf, c.count,
                                 c.type, c.team->comm));
}

dart_ret_t dart_send(const void* sendbuf, size_t nelem, dart_datatype_t dtype,
                     int tag, dart_global_unit_t unit) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  MPI_Count count;
  MPI_Datatype type;
  if (!AsMpi(nelem, dtype, &count, &type) || !Buffer(sendbuf, nelem) ||
      tag < 0 || !ValidUnit(unit)) {
    return DART_ERR_INVAL;
  }
  return FromMpi(PMPI_Send_c(sendbuf, count, type, unit.id, tag, g_dart.world));
}

dart_ret_t dart_recv(void* recvbuf, size_t nelem, dart_datatype_t dtype,
                     int tag, dart_global_unit_t unit) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  MPI_Count count;
  MPI_Datatype type;
  if (!AsMpi(nelem, dtype, &count, &type) || !Buffer(recvbuf, nelem) ||
      tag < 0 || !ValidUnit(unit)) {
    return DART_ERR_INVAL;
  }
  return FromMpi(PMPI_Recv_c(recvbuf, count, type, unit.id, tag, g_dart.world,
                             MPI_STATUS_IGNORE));
}

dart_ret_t dart_sendrecv(const void* sendbuf, size_t send_nelem,
                         dart_datatype_t send_dtype, int send_tag,
                         dart_global_unit_t dest, void* recvbuf,
                         size_t recv_nelem, dart_datatype_t recv_dtype,
                         int recv_tag, dart_global_unit_t src) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  MPI_Count send_count, recv_count;
  MPI_Datatype send_type, recv_type;
  if (!AsMpi(send_nelem, send_dtype, &send_count, &send_type) ||
      !AsMpi(recv_nelem, recv_dtype, &recv_count, &recv_type) ||
      !Buffer(sendbuf, send_nelem) || !Buffer(recvbuf, recv_nelem) ||
      send_tag < 0 || recv_tag < 0 || !ValidUnit(dest) || !ValidUnit(src)) {
    return DART_ERR_INVAL;
  }
  return FromMpi(PMPI_Sendrecv_c(
      sendbuf, send_count, send_type, dest.id, send_tag, recvbuf, recv_count,
      recv_type, src.id, recv_tag, g_dart.world, MPI_STATUS_IGNORE));
}

}  // extern "C"
