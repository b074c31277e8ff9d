// Remote put and get as one-sided RMA of the agents' transport
// (agent_transport.h: Register, Put, Get, FlushRma), on windows whose
// agents serve them (agent.h): every rank registers its window memory with
// the agents' UCX context at creation and the keys are exchanged, so a
// passive epoch's contiguous put or get to a target on another node is one
// UCX operation straight into the target's memory. On a network with RDMA
// (InfiniBand, RoCE) the NIC moves it, without the target or its agent;
// between the processes of one host UCX uses cross-memory attach; over TCP
// UCX emulates it, and the target's agent (or a stand-in) progresses it as
// it would a request. No update ever goes this way: puts are not atomic
// with anything in MPI (MPI-3 11.7.1), and the accumulate family stays the
// CPU's, in the target's node.
//
// Completion: an origin's RMA to a target is complete at the target once
// FlushRma returns; AgentFlush, AgentFlushAll and AgentUnlock do that before
// anything else, so a flush, an unlock and a lock's release cover them as
// MPI requires. A request-based put or get (MPI_Rput, MPI_Rget) is flushed
// at once: its request is complete when it is returned.
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "shim/agent/agent.h"
#include "shim/agent/agent_requests.h"
#include "shim/agent/agent_state.h"
#include "shim/process/runtime.h"
#include "shim/windows/window.h"

namespace rmashim {

// Copies of small puts' origin data (StartPut), per target, kept until
// that target's flush: bump-allocated in chunks, the first kept for the
// next epoch.
class BounceBuffers {
 public:
  static constexpr size_t kChunkBytes = size_t{256} * 1024;
  std::byte* Take(size_t bytes) {
    if (next_ == 0 || used_ + bytes > kChunkBytes) {
      if (next_ == chunks_.size()) {
        chunks_.push_back(std::make_unique<std::byte[]>(kChunkBytes));
      }
      ++next_;
      used_ = 0;
    }
    std::byte* at = chunks_[next_ - 1].get() + used_;
    used_ += bytes;
    held_ += bytes;
    return at;
  }
  size_t held() const { return held_; }
  void Release() {
    chunks_.resize(std::min<size_t>(chunks_.size(), 1));
    next_ = 0;
    used_ = 0;
    held_ = 0;
  }

 private:
  std::vector<std::unique_ptr<std::byte[]>> chunks_;
  size_t next_ = 0;  // chunks in use
  size_t used_ = 0;  // bytes of the last chunk in use
  size_t held_ = 0;
};

// A window's registration and its ranks' keys; under origin_mutex.
struct WindowRma {
  std::unique_ptr<AgentTransport::Registration> own;
  std::vector<uint64_t> bases;                 // per window rank
  std::vector<std::vector<std::byte>> packed;  // per window rank
  std::vector<std::unique_ptr<AgentTransport::RemoteKey>> keys;
  std::vector<uint8_t> pending;       // per window rank: RMA since its flush
  std::vector<BounceBuffers> bounce;  // per window rank
  bool any_pending = false;
};

namespace {

// The windows with RMA, under origin_mutex.
std::unordered_map<const ManagedWindow*, std::unique_ptr<WindowRma>>&
RmaWindows() {
  static auto* windows =
      new std::unordered_map<const ManagedWindow*, std::unique_ptr<WindowRma>>;
  return *windows;
}

std::atomic<long long> g_rma_ops{0};

// RMASHIM_AGENT_RMA=0 keeps remote puts and gets on the agents' requests.
bool RmaWanted() {
  const char* v = std::getenv("RMASHIM_AGENT_RMA");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

// Every rank's base address and key, over `comm`; false (on every rank)
// when a rank with memory has no key.
bool ExchangeKeys(const ManagedWindow& w, MPI_Comm comm, WindowRma& rma) {
  const int n = w.comm_size();
  const Target& own = w.target(w.rank());
  const std::span<const std::byte> key =
      rma.own != nullptr ? rma.own->key() : std::span<const std::byte>{};
  const uint64_t mine[3] = {reinterpret_cast<uintptr_t>(own.base), key.size(),
                            own.size > 0 && rma.own == nullptr ? 1u : 0u};
  std::vector<uint64_t> all(size_t{3} * n);
  PMPI_Allgather(mine, 3, MPI_UINT64_T, all.data(), 3, MPI_UINT64_T, comm);
  std::vector<int> counts(n), displs(n);
  int total = 0;
  bool complete = true;
  for (int r = 0; r < n; ++r) {
    complete = complete && all[3 * size_t(r) + 2] == 0;
    counts[r] = static_cast<int>(all[3 * size_t(r) + 1]);
    displs[r] = total;
    total += counts[r];
  }
  std::vector<std::byte> keys(static_cast<size_t>(total));
  PMPI_Allgatherv(key.data(), static_cast<int>(key.size()), MPI_BYTE,
                  keys.data(), counts.data(), displs.data(), MPI_BYTE, comm);
  if (!complete) return false;
  rma.bases.resize(n);
  rma.packed.resize(n);
  for (int r = 0; r < n; ++r) {
    rma.bases[r] = all[3 * size_t(r)];
    rma.packed[r].assign(keys.begin() + displs[r],
                         keys.begin() + displs[r] + counts[r]);
  }
  rma.keys.resize(n);
  rma.pending.assign(n, 0);
  rma.bounce.resize(n);
  return true;
}

// `target`'s key, unpacked at its first use; null where it cannot be.
AgentTransport::RemoteKey* KeyOf(AgentState& s, WindowRma& rma,
                                 const ManagedWindow& w, int target) {
  if (rma.keys[target] == nullptr && !rma.packed[target].empty()) {
    rma.keys[target] =
        s.transport->Unpack(w.world_rank(target), rma.packed[target]);
  }
  return rma.keys[target].get();
}

WindowRma* RmaOf(const ManagedWindow& w) {
  auto& windows = RmaWindows();
  const auto it = windows.find(&w);
  return it != windows.end() ? it->second.get() : nullptr;
}

// Up to kBounceBytes, a put whose origin data UCX would still read after
// it returns (a zero-copy transport) goes from a copy: MPI lets the origin
// reuse its buffer only after the flush, but programs commonly put from a
// temporary (MPICH's small puts are copied at once, and so were the agent's
// requests), and such a put is complete at the origin on return. Larger
// ones are read from the origin's buffer until the flush, as MPI says. A
// target's copies past kBounceHeldBytes flush it first.
constexpr size_t kBounceBytes = size_t{64} * 1024;
constexpr size_t kBounceHeldBytes = size_t{64} << 20;

bool StartPut(AgentState& s, WindowRma& rma, int target, int peer,
              AgentTransport::RemoteKey& key, uint64_t remote,
              const std::byte* origin, size_t bytes) {
  if (bytes > kBounceBytes) {
    return s.transport->Put(peer, key, remote, origin, bytes, nullptr);
  }
  bool not_now = false;
  if (!s.transport->Put(peer, key, remote, origin, bytes, &not_now)) {
    return false;
  }
  if (!not_now) return true;
  BounceBuffers& bounce = rma.bounce[target];
  if (bounce.held() + bytes > kBounceHeldBytes) {
    if (!FlushRmaStandingIn(s, peer)) return false;
    bounce.Release();
  }
  std::byte* copy = bounce.Take(bytes);
  std::memcpy(copy, origin, bytes);
  return s.transport->Put(peer, key, remote, copy, bytes, nullptr);
}

}  // namespace

void AgentOpenRma(ManagedWindow& w, MPI_Comm comm) {
  AgentState& s = TheAgent();
  if (!s.running.load() || !w.agent_served()) return;  // alike everywhere
  int wanted = RmaWanted() ? 1 : 0;
  PMPI_Allreduce(MPI_IN_PLACE, &wanted, 1, MPI_INT, MPI_MIN, comm);
  if (!wanted) return;
  auto rma = std::make_unique<WindowRma>();
  const Target& own = w.target(w.rank());
  if (own.size > 0) {
    rma->own = s.transport->Register(own.base, static_cast<size_t>(own.size));
  }
  if (!ExchangeKeys(w, comm, *rma)) return;
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  RmaWindows()[&w] = std::move(rma);
}

AgentRmaRetired::AgentRmaRetired(const ManagedWindow& w) {
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  auto& windows = RmaWindows();
  const auto it = windows.find(&w);
  if (it == windows.end()) return;
  record_ = it->second.release();
  windows.erase(it);
}

AgentRmaRetired::~AgentRmaRetired() { delete record_; }

void CloseAllRma() {
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  RmaWindows().clear();
}

std::optional<int> AgentRmaMove(ManagedWindow& w, bool put, int target,
                                MPI_Aint offset, std::byte* origin,
                                size_t bytes, bool complete_now) {
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  WindowRma* rma = RmaOf(w);
  if (rma == nullptr) return std::nullopt;
  AgentTransport::RemoteKey* key = KeyOf(s, *rma, w, target);
  if (key == nullptr) return std::nullopt;
  const int peer = w.world_rank(target);
  const uint64_t remote = rma->bases[target] + static_cast<uint64_t>(offset);
  const bool started =
      put ? StartPut(s, *rma, target, peer, *key, remote, origin, bytes)
          : s.transport->Get(peer, *key, remote, origin, bytes);
  if (!started) return MPI_ERR_OTHER;
  g_rma_ops.fetch_add(1, std::memory_order_relaxed);
  if (complete_now) {
    return FlushRmaStandingIn(s, peer) ? MPI_SUCCESS : MPI_ERR_OTHER;
  }
  rma->pending[target] = 1;
  rma->any_pending = true;
  return MPI_SUCCESS;
}

int FlushRmaLocked(AgentState& s, const ManagedWindow& w, int first, int last) {
  WindowRma* rma = RmaOf(w);
  if (rma == nullptr || !rma->any_pending) return MPI_SUCCESS;
  int rc = MPI_SUCCESS;
  for (int target = first; target < last; ++target) {
    if (rma->pending[target] == 0) continue;
    rma->pending[target] = 0;
    if (!FlushRmaStandingIn(s, w.world_rank(target))) {
      rc = MPI_ERR_OTHER;
    }
    rma->bounce[target].Release();
  }
  if (first == 0 && last == w.comm_size()) rma->any_pending = false;
  return rc;
}

int AgentFlushRma(ManagedWindow& w, int target) {
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  return FlushRmaLocked(s, w, target, target + 1);
}

int AgentFlushRmaAll(ManagedWindow& w) {
  AgentState& s = TheAgent();
  std::lock_guard<std::mutex> guard(s.origin_mutex);
  return FlushRmaLocked(s, w, 0, w.comm_size());
}

long long AgentRmaOps() { return g_rma_ops.load(); }

}  // namespace rmashim
