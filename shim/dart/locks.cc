// Team locks: MCS queue locks (Mellor-Crummey and Scott). Every unit owns
// a `next` and a `flag` word; one unit of the team, a different one for
// each lock of the team, owns the queue's `tail`. Acquiring swaps this unit
// in as the tail and, if there was a predecessor, links behind it and spins
// on its own flag until the predecessor hands the lock over: FIFO order,
// and no unit ever polls another unit's memory.
//
// On a team whose units share one node the words live in the core's
// shared-memory window and every step is a CPU atomic (truly one-sided, no
// messages). On a team spanning nodes whose every unit runs the core's
// agent (shim/agent/agent.h), steps on node-local units' words are CPU atomics
// too and steps on remote units' words go to their agents, which apply them
// with CPU atomics: a waiter polls its own flag in memory, and a remote
// unit hands the lock over without the waiter calling MPI (it still lets
// MPI progress while it polls, for other units' MPI operations). Otherwise
// every step is an MPI atomic on the window, including polling the own flag
// (which also makes MPI progress).
// The words of 64 locks of a team share one window, so dart_team_lock_init
// is a barrier, not a window creation, most of the time.
#include <atomic>
#include <thread>

#include "shim/agent/agent.h"
#include "shim/dart/state.h"
#include "shim/sync/shm_lock.h"

struct dart_lock_struct {
  dart_team_t team = DART_TEAM_NULL;
  rmashim::dart::LockBlock* block = nullptr;
  int slot = 0;       // in the team's lock slots
  MPI_Aint base = 0;  // byte offset of this lock's words in every unit
  int me = 0;         // team unit
  int tail = 0;       // team unit holding the tail word
  bool held = false;
  // Threads of this unit take the lock in turn: one holds `local` while it
  // queues for and holds the team-wide lock (DART_THREAD_MULTIPLE).
  std::atomic<bool> local{false};
};

namespace rmashim::dart {
namespace {

// Word offsets in every unit's part, a cache line each.
constexpr MPI_Aint kTail = 0;
constexpr MPI_Aint kNext = 64;
constexpr MPI_Aint kFlag = 128;
constexpr MPI_Aint kBytes = 192;
constexpr int kLocksPerBlock = 64;
constexpr int64_t kNobody = -1;

class Words {
 public:
  explicit Words(const dart_lock_struct& l) : b_(*l.block), base_(l.base) {}

  int64_t Swap(int unit, MPI_Aint word, int64_t value) {
    if (InMemory(unit)) {
      return Ref(unit, word).exchange(value, std::memory_order_acq_rel);
    }
    int64_t old = 0;
    if (b_.agent) {
      ToAgent(unit, word, MPI_REPLACE, &value, &old);
      return old;
    }
    PMPI_Fetch_and_op(&value, &old, MPI_INT64_T, unit, base_ + word,
                      MPI_REPLACE, b_.rma_win);
    PMPI_Win_flush(unit, b_.rma_win);
    return old;
  }

  // Returns the old value; the swap happened if it equals `expected`.
  int64_t CompareSwap(int unit, MPI_Aint word, int64_t expected,
                      int64_t desired) {
    if (InMemory(unit)) {
      Ref(unit, word)
          .compare_exchange_strong(expected, desired,
                                   std::memory_order_acq_rel);
      return expected;
    }
    int64_t old = 0;
    if (b_.agent) {
      LockGuard guard;  // the window's agent bookkeeping
      AgentCompareSwap(*b_.window, unit, base_ + word, MPI_INT64_T,
                       sizeof(int64_t),
                       reinterpret_cast<const std::byte*>(&desired),
                       reinterpret_cast<const std::byte*>(&expected),
                       reinterpret_cast<std::byte*>(&old));
      return old;
    }
    PMPI_Compare_and_swap(&desired, &expected, &old, MPI_INT64_T, unit,
                          base_ + word, b_.rma_win);
    PMPI_Win_flush(unit, b_.rma_win);
    return old;
  }

  void Store(int unit, MPI_Aint word, int64_t value) {
    if (InMemory(unit)) {
      Ref(unit, word).store(value, std::memory_order_release);
      return;
    }
    if (b_.agent) {  // applied before it returns: the next step relies on it
      ToAgent(unit, word, MPI_REPLACE, &value, nullptr);
      LockGuard guard;
      AgentFlush(*b_.window, unit);
      return;
    }
    PMPI_Accumulate(&value, 1, MPI_INT64_T, unit, base_ + word, 1, MPI_INT64_T,
                    MPI_REPLACE, b_.rma_win);
    PMPI_Win_flush(unit, b_.rma_win);
  }

  int64_t Load(int unit, MPI_Aint word) {
    if (InMemory(unit)) return Ref(unit, word).load(std::memory_order_acquire);
    int64_t value = 0;
    if (b_.agent) {
      ToAgent(unit, word, MPI_NO_OP, nullptr, &value);
      return value;
    }
    PMPI_Fetch_and_op(&value, &value, MPI_INT64_T, unit, base_ + word,
                      MPI_NO_OP, b_.rma_win);
    PMPI_Win_flush(unit, b_.rma_win);
    return value;
  }

 private:
  // Whether `unit`'s words are reached with CPU atomics here.
  bool InMemory(int unit) const {
    return b_.shm || (b_.agent && b_.window->target(unit).node_local());
  }
  // One word of remote `unit` through its agent: `value` combined with
  // `op` (nullptr for MPI_NO_OP), the old value into `old` when not null.
  void ToAgent(int unit, MPI_Aint word, MPI_Op op, const int64_t* value,
               int64_t* old) {
    LockGuard guard;  // the window's agent bookkeeping
    AgentUpdateContiguous(*b_.window, unit, base_ + word, MPI_INT64_T, op, 1,
                          sizeof(int64_t),
                          reinterpret_cast<const std::byte*>(value),
                          reinterpret_cast<std::byte*>(old));
  }
  std::atomic_ref<int64_t> Ref(int unit, MPI_Aint word) {
    return std::atomic_ref<int64_t>(*reinterpret_cast<int64_t*>(
        b_.window->target(unit).base + base_ + word));
  }
  LockBlock& b_;
  MPI_Aint base_;
};

bool ValidLock(dart_lock_t lock) {
  LockGuard guard;
  return lock != nullptr && g_dart.locks.count(lock) != 0;
}

// Takes the lock among this unit's threads; false if `wait` is false and
// another thread has it.
bool TakeLocal(dart_lock_t lock, bool wait) {
  while (lock->local.exchange(true, std::memory_order_acquire)) {
    if (!wait) return false;
    std::this_thread::yield();
  }
  return true;
}

void GiveLocal(dart_lock_t lock) {
  lock->local.store(false, std::memory_order_release);
}

// Resets this unit's queue node before it enqueues.
void ResetNode(Words& words, int me) {
  words.Store(me, kNext, kNobody);
  words.Store(me, kFlag, 0);
}

// Collective over the team: a window with room for kLocksPerBlock more
// locks.
dart_ret_t AddLockBlock(Team& team) {
  auto block = std::make_unique<LockBlock>();
  ManagedWindow* w = nullptr;
  void* base = nullptr;
  if (ManagedWindow::Allocate(kBytes * kLocksPerBlock, 1, MPI_INFO_NULL,
                              team.comm, &base, &w) != MPI_SUCCESS) {
    return DART_ERR_OTHER;
  }
  block->window.reset(w);
  block->shm = w->locks_in_shm();
  block->agent = w->agent_served();  // allocated: node-local units mapped
  block->rma_win = w->app_win();
  PMPI_Win_set_errhandler(block->rma_win, MPI_ERRORS_RETURN);
  if (!w->holds_mpi_epoch()) {  // else the core keeps one open
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, block->rma_win);
    block->locked_all = true;
  }
  const int first = static_cast<int>(team.lock_blocks.size()) * kLocksPerBlock;
  for (int i = 0; i < kLocksPerBlock; ++i)
    team.free_lock_slots.insert(first + i);
  team.lock_blocks.push_back(std::move(block));
  return DART_OK;
}

}  // namespace

LockBlock::~LockBlock() {
  if (locked_all) PMPI_Win_unlock_all(rma_win);
  window.reset();  // collective
}

void DestroyLock(dart_lock_t lock) {
  if (Team* team = FindTeam(lock->team)) {
    std::erase(team->locks, lock);
    team->free_lock_slots.insert(lock->slot);
  }
  g_dart.locks.erase(lock);
  delete lock;
}

}  // namespace rmashim::dart

using namespace rmashim;
using namespace rmashim::dart;

extern "C" {

dart_ret_t dart_team_lock_init(dart_team_t teamid, dart_lock_t* lock) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  Team* team = FindTeam(teamid);
  if (team == nullptr) return DART_ERR_INVAL;
  if (!AllAgree(team->comm, lock != nullptr)) return DART_ERR_INVAL;
  // Only this thread changes the team's lock tables (DART: one thread per
  // team in collective calls); the window creation runs unlocked.
  if (team->free_lock_slots.empty()) {
    if (dart_ret_t rc = AddLockBlock(*team)) return rc;
  }
  auto l = std::make_unique<dart_lock_struct>();
  l->team = teamid;
  l->slot = *team->free_lock_slots.begin();
  team->free_lock_slots.erase(team->free_lock_slots.begin());
  l->block = team->lock_blocks[l->slot / kLocksPerBlock].get();
  l->base = (l->slot % kLocksPerBlock) * kBytes;
  l->me = team->myid;
  // Spread the tails of a team's locks over its units.
  l->tail = team->locks_created++ % team->size;
  Words words(*l);
  words.Store(l->me, kTail, kNobody);
  ResetNode(words, l->me);
  PMPI_Barrier(team->comm);  // initialized everywhere before first use
  *lock = l.release();
  LockGuard guard;
  g_dart.locks.insert(*lock);
  team->locks.push_back(*lock);
  return DART_OK;
}

dart_ret_t dart_team_lock_destroy(dart_lock_t* lock) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (lock == nullptr || !ValidLock(*lock)) return DART_ERR_INVAL;
  // Nobody uses the lock any more before its words are handed out again.
  if (Team* team = FindTeam((*lock)->team)) PMPI_Barrier(team->comm);
  LockGuard guard;
  DestroyLock(*lock);
  *lock = nullptr;
  return DART_OK;
}

dart_ret_t dart_lock_acquire(dart_lock_t lock) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (!ValidLock(lock)) return DART_ERR_INVAL;
  // Single-threaded, acquiring a held lock would wait for itself forever.
  if (!g_dart.threaded && lock->held) return DART_ERR_INVAL;
  TakeLocal(lock, /*wait=*/true);
  Words words(*lock);
  const int me = lock->me;
  ResetNode(words, me);
  const int64_t pred = words.Swap(lock->tail, kTail, me);
  if (pred != kNobody) {
    words.Store(static_cast<int>(pred), kNext, me);
    Backoff backoff;
    while (words.Load(me, kFlag) == 0) {
      PokeProgress();
      backoff.Wait();
    }
  }
  lock->held = true;
  return DART_OK;
}

dart_ret_t dart_lock_try_acquire(dart_lock_t lock, int32_t* result) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (!ValidLock(lock) || result == nullptr ||
      (!g_dart.threaded && lock->held)) {
    return DART_ERR_INVAL;
  }
  *result = 0;
  if (!TakeLocal(lock, /*wait=*/false)) return DART_OK;  // another thread
  Words words(*lock);
  ResetNode(words, lock->me);
  lock->held =
      words.CompareSwap(lock->tail, kTail, kNobody, lock->me) == kNobody;
  if (!lock->held) {
    GiveLocal(lock);
    PokeProgressNowAndThen();  // a unit may poll for the lock
  }
  *result = lock->held ? 1 : 0;
  return DART_OK;
}

dart_ret_t dart_lock_release(dart_lock_t lock) {
  if (!g_dart.initialized) return DART_ERR_NOTINIT;
  if (!ValidLock(lock) || !lock->held) return DART_ERR_INVAL;
  Words words(*lock);
  const int me = lock->me;
  int64_t next = words.Load(me, kNext);
  if (next == kNobody) {
    // No successor known: leave if still the tail, else wait for the
    // successor to link in.
    if (words.CompareSwap(lock->tail, kTail, me, kNobody) == me) {
      lock->held = false;
      GiveLocal(lock);
      return DART_OK;
    }
    Backoff backoff;
    while ((next = words.Load(me, kNext)) == kNobody) {
      PokeProgress();
      backoff.Wait();
    }
  }
  words.Store(static_cast<int>(next), kFlag, 1);
  lock->held = false;
  GiveLocal(lock);
  return DART_OK;
}

bool dart_lock_initialized(struct dart_lock_struct const* lock) {
  if (!g_dart.initialized || lock == nullptr) return false;
  LockGuard guard;
  return g_dart.locks.count(const_cast<dart_lock_t>(lock)) != 0;
}

}  // extern "C"
