// Contention: every rank works on the same targets at once, native MPICH
// (an opted-out window) vs the shim vs a CPU floor of the same pattern on
// the mapped memory, in one run, microseconds per operation of the slowest
// rank. scripts/bench_contention.sh runs it at 2..N ranks and draws a table
// and a plot per pattern over the rank count.
//
// Patterns (all ranks at once):
//   fop_hot        MPI_Fetch_and_op(SUM) + flush on rank 0's one counter
//                  (floor: one lock xadd on the mapped counter)
//   excl_cs        exclusive lock on rank 0, get, flush, put (+1), unlock: a
//                  counter under a mutex (floor: a textbook MCS queue lock,
//                  each waiter spinning on its own cache line)
//   lock_all_put   lock_all, 8-byte put to the right neighbour, flush,
//                  unlock_all (floor: a store between two stores to this
//                  rank's own reader flag)
//   put_fence      8-byte put to the right neighbour, fence (floor: a store
//                  and a dissemination barrier on mapped flags)
//   pscw_ring      post to the left, start to the right, put, complete,
//                  wait (floor: per-pair post and complete counters)
//   shared_get     shared lock on the right neighbour, 8-byte get, unlock
//                  (floor: a reader count on the target, and a load)
//   random_acc     lock_all, 64 8-byte MPI_SUM accumulates to random ranks
//                  and places, flush_all, unlock_all; per accumulate (floor:
//                  lock xadd at the same places)
// Counters are checked (excl_cs, fop_hot and random_acc must add up
// exactly, in every column; "contention: verification passed" on stderr),
// so a fast wrong answer does not show as a win. The floor needs every rank on
// one node and the shim preloaded (MPI_Win_shared_query on a managed window);
// elsewhere its column is "-".
//
//   contention [--csv] [--quick] [--patterns a,b,c]
#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <random>
#include <set>
#include <sstream>

#include "bench/bench_util.h"

namespace {

using namespace rmashim_bench;  // NOLINT

constexpr MPI_Aint kWindowBytes = 8192;  // a 4 KiB area for random_acc, words
constexpr int kRandomAccPerEpoch = 64;
constexpr MPI_Aint kCounter = 0;     // excl_cs / fop_hot (rank 0)
constexpr MPI_Aint kNeighbour = 64;  // lock_all_put, put_fence, pscw, get
constexpr MPI_Aint kArea = 4096;     // random_acc: 512 words

// ---- The CPU floor's shared state, laid out in each rank's mapped memory.

struct alignas(64) Line {
  std::atomic<int64_t> v{0};
};

// One rank's floor block (in a managed window of its own, mapped by all).
struct FloorBlock {
  Line counter;   // rank 0: the excl_cs / fop_hot counter
  Line mcs_tail;  // rank 0: the MCS lock's tail (-1 free)
  Line mcs_next;  // this rank's queue node
  Line mcs_locked;
  Line reader;       // lock_all floor: this rank's reader flag
  Line readers;      // shared_get floor: readers of this rank
  Line neighbour;    // data word written by the left neighbour
  Line post;         // pscw: posts received from the right neighbour
  Line complete;     // pscw: completes received from the left neighbour
  Line barrier[32];  // dissemination barrier: arrivals per round
  Line area[512];    // random_acc words
};

bool g_oversubscribed = false;

// Spins on the condition; yields now and then when ranks share cores.
template <typename Pred>
void FloorWait(Pred ready) {
  for (uint32_t spins = 0; !ready(); ++spins) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
    if (g_oversubscribed && (spins & 255) == 255) sched_yield();
  }
}

class Floor {
 public:
  // Collective. Usable only when every rank maps every other's block.
  explicit Floor(int rank, int size) : rank_(rank), size_(size) {
    win_ = AllocateWindow(true, sizeof(FloorBlock), &mine_);
    blocks_.resize(size);
    int ok = 1;
    for (int r = 0; r < size; ++r) {
      blocks_[r] = reinterpret_cast<FloorBlock*>(MappedPeer(win_, r));
      ok &= blocks_[r] != nullptr;
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    usable_ = ok != 0;
    if (usable_) {
      new (blocks_[rank]) FloorBlock();
      if (rank == 0) blocks_[0]->mcs_tail.v = -1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  ~Floor() { MPI_Win_free(&win_); }
  bool usable() const { return usable_; }
  FloorBlock& at(int r) { return *blocks_[r]; }
  FloorBlock& own() { return *blocks_[rank_]; }

  void McsLock() {
    FloorBlock& me = own();
    me.mcs_next.v.store(-1, std::memory_order_relaxed);
    me.mcs_locked.v.store(1, std::memory_order_relaxed);
    const int64_t pred =
        at(0).mcs_tail.v.exchange(rank_, std::memory_order_acq_rel);
    if (pred < 0) return;
    at(static_cast<int>(pred))
        .mcs_next.v.store(rank_, std::memory_order_release);
    FloorWait(
        [&] { return me.mcs_locked.v.load(std::memory_order_acquire) == 0; });
  }
  void McsUnlock() {
    FloorBlock& me = own();
    int64_t next = me.mcs_next.v.load(std::memory_order_acquire);
    if (next < 0) {
      int64_t expected = rank_;
      if (at(0).mcs_tail.v.compare_exchange_strong(expected, -1,
                                                   std::memory_order_acq_rel)) {
        return;
      }
      FloorWait([&] {
        return (next = me.mcs_next.v.load(std::memory_order_acquire)) >= 0;
      });
    }
    at(static_cast<int>(next)).mcs_locked.v.store(0, std::memory_order_release);
  }
  // Dissemination barrier: round k signals rank + 2^k, waits for rank - 2^k.
  void Barrier() {
    ++barrier_epoch_;
    for (int k = 0, d = 1; d < size_; ++k, d *= 2) {
      at((rank_ + d) % size_)
          .barrier[k]
          .v.fetch_add(1, std::memory_order_release);
      Line& mine = own().barrier[k];
      FloorWait([&] {
        return mine.v.load(std::memory_order_acquire) >= barrier_epoch_;
      });
    }
  }

 private:
  int rank_, size_;
  MPI_Win win_ = MPI_WIN_NULL;
  char* mine_ = nullptr;
  std::vector<FloorBlock*> blocks_;
  bool usable_ = false;
  int64_t barrier_epoch_ = 0;
};

// ---- The patterns, on an MPI window (native or shim) and on the floor.

struct Ctx {
  int rank, size, left, right;
  double batch_ms;
  std::mt19937_64 rng;
};

// Runs `body` on every rank (TimeOnAll: the slowest rank's microseconds per
// call) and returns it divided by `per_call` operations.
template <typename Body>
double Measure(const Ctx& c, int per_call, Body body) {
  return TimeOnAll(MPI_COMM_WORLD, c.batch_ms, body) / per_call;
}

// The run's checks (bench_util.h: one verdict line, the exit status): a
// benchmark of a wrong answer is no result.
Verifier* g_verifier = nullptr;

void Expect(bool ok, const char* what, const char* column) {
  g_verifier->Expect(ok, std::string(what) + ", " + column + " column");
}

// Sum over ranks of `calls`, for the counter checks.
int64_t Total(int64_t calls) {
  MPI_Allreduce(MPI_IN_PLACE, &calls, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return calls;
}

// The value of rank 0's counter in `win` (after the epochs closed).
int64_t ReadCounter(MPI_Win win, MPI_Aint disp) {
  int64_t v = 0;
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  MPI_Get(&v, 1, MPI_INT64_T, 0, disp, 1, MPI_INT64_T, win);
  MPI_Win_unlock(0, win);
  return v;
}

void ZeroWindow(MPI_Win win, char* base) {
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, Rank(), 0, win);
  std::memset(base, 0, kWindowBytes);
  MPI_Win_unlock(Rank(), win);
  MPI_Barrier(MPI_COMM_WORLD);
}

double FopHot(Ctx& c, MPI_Win win, char* base, const char* column) {
  ZeroWindow(win, base);
  int64_t calls = 0;
  const int64_t one = 1;
  MPI_Win_lock_all(0, win);
  const double us = Measure(c, 1, [&] {
    int64_t old;
    MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, kCounter, MPI_SUM, win);
    MPI_Win_flush(0, win);
    ++calls;
  });
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  const int64_t total = Total(calls);
  Expect(c.rank != 0 || ReadCounter(win, kCounter) == total, "fop_hot counter",
         column);
  return us;
}

double FopHotFloor(Ctx& c, Floor& f) {
  int64_t calls = 0;
  if (c.rank == 0) f.at(0).counter.v = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double us = Measure(c, 1, [&] {
    f.at(0).counter.v.fetch_add(1, std::memory_order_acq_rel);
    ++calls;
  });
  MPI_Barrier(MPI_COMM_WORLD);
  const int64_t total = Total(calls);
  Expect(c.rank != 0 || f.at(0).counter.v.load() == total, "fop_hot counter",
         "floor");
  return us;
}

double ExclusiveSection(Ctx& c, MPI_Win win, char* base, const char* column) {
  ZeroWindow(win, base);
  int64_t calls = 0;
  const double us = Measure(c, 1, [&] {
    int64_t v = 0;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Get(&v, 1, MPI_INT64_T, 0, kCounter, 1, MPI_INT64_T, win);
    MPI_Win_flush(0, win);
    ++v;
    MPI_Put(&v, 1, MPI_INT64_T, 0, kCounter, 1, MPI_INT64_T, win);
    MPI_Win_unlock(0, win);
    ++calls;
  });
  MPI_Barrier(MPI_COMM_WORLD);
  const int64_t total = Total(calls);
  Expect(c.rank != 0 || ReadCounter(win, kCounter) == total,
         "excl_cs counter (mutual exclusion)", column);
  return us;
}

double ExclusiveSectionFloor(Ctx& c, Floor& f) {
  int64_t calls = 0;
  if (c.rank == 0) f.at(0).counter.v = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double us = Measure(c, 1, [&] {
    f.McsLock();
    const int64_t v = f.at(0).counter.v.load(std::memory_order_relaxed);
    f.at(0).counter.v.store(v + 1, std::memory_order_relaxed);
    f.McsUnlock();
    ++calls;
  });
  MPI_Barrier(MPI_COMM_WORLD);
  const int64_t total = Total(calls);
  Expect(c.rank != 0 || f.at(0).counter.v.load() == total,
         "excl_cs counter (mutual exclusion)", "floor");
  return us;
}

double LockAllPut(Ctx& c, MPI_Win win) {
  const int64_t v = c.rank;
  return Measure(c, 1, [&] {
    MPI_Win_lock_all(0, win);
    MPI_Put(&v, 1, MPI_INT64_T, c.right, kNeighbour, 1, MPI_INT64_T, win);
    MPI_Win_flush(c.right, win);
    MPI_Win_unlock_all(win);
  });
}

double LockAllPutFloor(Ctx& c, Floor& f) {
  return Measure(c, 1, [&] {
    f.own().reader.v.store(1, std::memory_order_seq_cst);
    f.at(c.right).neighbour.v.store(c.rank, std::memory_order_relaxed);
    f.own().reader.v.store(0, std::memory_order_release);
  });
}

double PutFence(Ctx& c, MPI_Win win) {
  const int64_t v = c.rank;
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  const double us = Measure(c, 1, [&] {
    MPI_Put(&v, 1, MPI_INT64_T, c.right, kNeighbour, 1, MPI_INT64_T, win);
    MPI_Win_fence(0, win);
  });
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  return us;
}

double PutFenceFloor(Ctx& c, Floor& f) {
  return Measure(c, 1, [&] {
    f.at(c.right).neighbour.v.store(c.rank, std::memory_order_relaxed);
    f.Barrier();
  });
}

double PscwRing(Ctx& c, MPI_Win win) {
  MPI_Group world, left, right;
  MPI_Win_get_group(win, &world);
  MPI_Group_incl(world, 1, &c.left, &left);
  MPI_Group_incl(world, 1, &c.right, &right);
  const int64_t v = c.rank;
  const double us = Measure(c, 1, [&] {
    MPI_Win_post(left, 0, win);
    MPI_Win_start(right, 0, win);
    MPI_Put(&v, 1, MPI_INT64_T, c.right, kNeighbour, 1, MPI_INT64_T, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
  });
  MPI_Group_free(&left);
  MPI_Group_free(&right);
  MPI_Group_free(&world);
  return us;
}

double PscwRingFloor(Ctx& c, Floor& f) {
  int64_t epoch = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  return Measure(c, 1, [&] {
    ++epoch;
    // post: tell the left neighbour (my origin) it may write
    f.at(c.left).post.v.fetch_add(1, std::memory_order_release);
    // start: wait for the right neighbour's post
    FloorWait([&] {
      return f.own().post.v.load(std::memory_order_acquire) >= epoch;
    });
    f.at(c.right).neighbour.v.store(c.rank, std::memory_order_relaxed);
    // complete: tell the right neighbour; wait: for the left's complete
    f.at(c.right).complete.v.fetch_add(1, std::memory_order_release);
    FloorWait([&] {
      return f.own().complete.v.load(std::memory_order_acquire) >= epoch;
    });
  });
}

double SharedGet(Ctx& c, MPI_Win win) {
  return Measure(c, 1, [&] {
    int64_t v;
    MPI_Win_lock(MPI_LOCK_SHARED, c.right, 0, win);
    MPI_Get(&v, 1, MPI_INT64_T, c.right, kNeighbour, 1, MPI_INT64_T, win);
    MPI_Win_unlock(c.right, win);
  });
}

double SharedGetFloor(Ctx& c, Floor& f) {
  int64_t sink = 0;
  const double us = Measure(c, 1, [&] {
    FloorBlock& t = f.at(c.right);
    t.readers.v.fetch_add(1, std::memory_order_acquire);
    sink += t.neighbour.v.load(std::memory_order_relaxed);
    t.readers.v.fetch_sub(1, std::memory_order_release);
  });
  return us + 0 * static_cast<double>(sink);
}

// Random places: the same sequence in every column.
std::vector<std::pair<int, int>> RandomPlaces(Ctx& c, int n) {
  std::vector<std::pair<int, int>> p(n);
  for (auto& [rank, word] : p) {
    rank = static_cast<int>(c.rng() % c.size);
    word = static_cast<int>(c.rng() % 512);
  }
  return p;
}

int64_t SumArea(MPI_Win win, char* base) {
  MPI_Win_lock(MPI_LOCK_SHARED, Rank(), 0, win);
  int64_t sum = 0;
  for (int i = 0; i < 512; ++i) {
    int64_t w;
    std::memcpy(&w, base + kArea + 8 * i, 8);
    sum += w;
  }
  MPI_Win_unlock(Rank(), win);
  return Total(sum);
}

double RandomAcc(Ctx& c, MPI_Win win, char* base, const char* column) {
  ZeroWindow(win, base);
  const auto places = RandomPlaces(c, 4096);
  size_t next = 0;
  int64_t calls = 0;
  const int64_t one = 1;
  const double us = Measure(c, kRandomAccPerEpoch, [&] {
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < kRandomAccPerEpoch; ++i) {
      const auto [rank, word] = places[next++ % places.size()];
      MPI_Accumulate(&one, 1, MPI_INT64_T, rank, kArea + 8 * word, 1,
                     MPI_INT64_T, MPI_SUM, win);
    }
    MPI_Win_flush_all(win);
    MPI_Win_unlock_all(win);
    calls += kRandomAccPerEpoch;
  });
  MPI_Barrier(MPI_COMM_WORLD);
  Expect(SumArea(win, base) == Total(calls), "random_acc sum", column);
  return us;
}

double RandomAccFloor(Ctx& c, Floor& f) {
  const auto places = RandomPlaces(c, 4096);
  size_t next = 0;
  return Measure(c, kRandomAccPerEpoch, [&] {
    for (int i = 0; i < kRandomAccPerEpoch; ++i) {
      const auto [rank, word] = places[next++ % places.size()];
      f.at(rank).area[word].v.fetch_add(1, std::memory_order_relaxed);
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);
  });
}

struct Pattern {
  const char* name;
  std::function<double(Ctx&, MPI_Win, char*, const char*)> mpi;
  std::function<double(Ctx&, Floor&)> floor;
};

int Run(const Flags& flags, const std::set<std::string>& only) {
  RequireRanks(2);
  Verifier verifier("contention");
  g_verifier = &verifier;
  Ctx c;
  c.rank = Rank();
  c.size = Size();
  c.left = (c.rank + c.size - 1) % c.size;
  c.right = (c.rank + 1) % c.size;
  c.batch_ms = BatchMs(flags);
  c.rng.seed(1234567 + c.rank);
  g_oversubscribed = c.size > sysconf(_SC_NPROCESSORS_ONLN);
  WindowPair windows(kWindowBytes, MPI_COMM_WORLD);
  Floor floor(c.rank, c.size);
  const std::vector<Pattern> patterns = {
      {"fop_hot", FopHot, FopHotFloor},
      {"excl_cs", ExclusiveSection, ExclusiveSectionFloor},
      {"lock_all_put",
       [](Ctx& x, MPI_Win w, char*, const char*) { return LockAllPut(x, w); },
       LockAllPutFloor},
      {"put_fence",
       [](Ctx& x, MPI_Win w, char*, const char*) { return PutFence(x, w); },
       PutFenceFloor},
      {"pscw_ring",
       [](Ctx& x, MPI_Win w, char*, const char*) { return PscwRing(x, w); },
       PscwRingFloor},
      {"shared_get",
       [](Ctx& x, MPI_Win w, char*, const char*) { return SharedGet(x, w); },
       SharedGetFloor},
      {"random_acc", RandomAcc, RandomAccFloor},
  };
  Table table({"pattern", "ranks", "native_us", "shim_us", "floor_us",
               "native/shim", "shim/floor", "oversubscribed"});
  for (const Pattern& p : patterns) {
    if (!only.empty() && !only.count(p.name)) continue;
    const double native =
        p.mpi(c, windows.native.win, windows.native.base, "native");
    const double shim = p.mpi(c, windows.shim.win, windows.shim.base, "shim");
    const double fl = floor.usable() ? p.floor(c, floor) : 0;
    table.Add({p.name, std::to_string(c.size), Num(native), Num(shim),
               fl > 0 ? Num(fl) : "-", Ratio(native, shim), Ratio(shim, fl),
               g_oversubscribed ? "yes" : "no"});
  }
  if (c.rank == 0) table.Print(flags.csv);
  return verifier.Finish();
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  // [--csv] [--quick] [--patterns a,b]
  const Flags flags = ParseFlags(argc, argv, {{"--patterns", 1}});
  std::set<std::string> only;
  if (const char* patterns = OptionValue(argc, argv, "--patterns")) {
    std::stringstream list(patterns);
    for (std::string p; std::getline(list, p, ',');) only.insert(p);
  }
  const int status = Run(flags, only);
  MPI_Finalize();
  return status;
}
