// Random Access (GUPS, HPC Challenge): every rank applies 8-byte XOR updates
// to random words of a table distributed over all ranks, as in the PGAS
// paper's RA benchmark. Native MPICH window vs rmashim window in the same
// run, plus the CPU floor (atomic XOR straight into the peers' mapped
// memory). Two kinds of update:
//   acc: MPI_Accumulate(MPI_BXOR), flushed every kLookahead updates (HPCC's
//        look-ahead of 1024 outstanding updates);
//   fop: MPI_Fetch_and_op(MPI_BXOR) + flush, a blocking atomic per update.
// Verification: the table after one pass must equal the updates replayed
// locally (exact, the updates are atomic), and a second pass of the same
// stream must restore the initial table (HPCC's error check; it allows 1%
// errors for racy updates, atomic ones must have none).
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_util.h"

namespace {

using namespace rmashim_bench;  // NOLINT

constexpr int kLookahead = 1024;

enum class Engine { kNative, kShim, kFloor };
enum class Update { kAccumulate, kFetchAndOp };

const char* Name(Engine e) {
  return e == Engine::kNative ? "native"
         : e == Engine::kShim ? "shim"
                              : "floor";
}
const char* Name(Update u) { return u == Update::kAccumulate ? "acc" : "fop"; }

// The update stream of one rank: splitmix64, seeded by the rank.
class Stream {
 public:
  explicit Stream(int rank) : state_(0x9e3779b97f4a7c15ULL * (rank + 1)) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

struct Layout {
  uint64_t words_per_rank;
  int ranks;
  uint64_t total() const { return words_per_rank * ranks; }
  int Owner(uint64_t r) const {
    return static_cast<int>(r % total() / words_per_rank);
  }
  uint64_t Offset(uint64_t r) const { return r % total() % words_per_rank; }
  uint64_t Initial(int rank, uint64_t i) const {
    return rank * words_per_rank + i;
  }
};

struct Pass {
  long updates;    // this rank's
  double seconds;  // this rank's
};

// Applies updates of this rank's stream through `engine`: exactly `updates`
// of them, or with updates < 0 as many as fit in `budget_s` (engines differ
// by 1000x in speed; a time budget keeps every pass measurable and short).
Pass Apply(Engine engine, Update kind, MPI_Win win,
           const std::vector<uint64_t*>& peers, const Layout& t, long updates,
           double budget_s) {
  Stream stream(Rank());
  std::vector<uint64_t> values(kLookahead);
  uint64_t old = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  const double deadline = t0 + budget_s;
  // Reading the clock costs about as much as one update of the floor, or
  // of the shim: every engine reads it once per 64 updates (the same
  // pattern; native MPICH overshoots its budget by 64 of its updates).
  const long check_every = 64;
  auto done = [&](long u) {
    return updates >= 0 ? u == updates
                        : u % check_every == 0 && MPI_Wtime() > deadline;
  };
  long u = 0;
  if (engine == Engine::kFloor) {
    for (; !done(u); ++u) {
      const uint64_t r = stream.Next();
      std::atomic_ref(peers[t.Owner(r)][t.Offset(r)]).fetch_xor(r);
    }
    return {u, MPI_Wtime() - t0};
  }
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  for (; !done(u); ++u) {
    const uint64_t r = stream.Next();
    const int owner = t.Owner(r);
    const MPI_Aint disp = t.Offset(r) * 8;  // windows count in bytes
    if (kind == Update::kFetchAndOp) {
      MPI_Fetch_and_op(&r, &old, MPI_UINT64_T, owner, disp, MPI_BXOR, win);
      MPI_Win_flush(owner, win);
      continue;
    }
    // The origin buffer stays untouched until a flush completes it.
    uint64_t& value = values[u % kLookahead];
    value = r;
    MPI_Accumulate(&value, 1, MPI_UINT64_T, owner, disp, 1, MPI_UINT64_T,
                   MPI_BXOR, win);
    if ((u + 1) % kLookahead == 0) MPI_Win_flush_all(win);
  }
  MPI_Win_unlock_all(win);
  return {u, MPI_Wtime() - t0};
}

// This rank's part of the table after rank r applied updates[r] updates.
std::vector<uint64_t> Expected(const Layout& t,
                               const std::vector<long>& updates) {
  const int me = Rank();
  std::vector<uint64_t> expected(t.words_per_rank);
  for (uint64_t i = 0; i < t.words_per_rank; ++i)
    expected[i] = t.Initial(me, i);
  for (int rank = 0; rank < t.ranks; ++rank) {
    Stream stream(rank);
    for (long u = 0; u < updates[rank]; ++u) {
      const uint64_t r = stream.Next();
      if (t.Owner(r) == me) expected[t.Offset(r)] ^= r;
    }
  }
  return expected;
}

// Words of this rank's part that differ from `expected`, summed over ranks.
long Errors(MPI_Win win, const uint64_t* table,
            const std::vector<uint64_t>& expected) {
  long errors = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  OnOwnMemory(win, /*passive=*/true, [&] {
    for (size_t i = 0; i < expected.size(); ++i)
      errors += table[i] != expected[i];
  });
  MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return errors;
}

struct Result {
  double gups = 0;
  long updates = 0;  // all ranks, one pass
};

// One engine: a timed pass, the exact check against the replayed updates,
// the same updates again (timed too), HPCC's check that they undid the
// first pass. GUPS over both passes, timed by the slowest rank.
Result Run(Engine engine, Update kind, MPI_Win win, uint64_t* table,
           const std::vector<uint64_t*>& peers, const Layout& t,
           double budget_s, Verifier& verifier) {
  std::vector<uint64_t> initial(t.words_per_rank);
  for (uint64_t i = 0; i < t.words_per_rank; ++i)
    initial[i] = t.Initial(Rank(), i);
  OnOwnMemory(win, /*passive=*/true,
              [&] { std::copy(initial.begin(), initial.end(), table); });
  const Pass first = Apply(engine, kind, win, peers, t, -1, budget_s);
  std::vector<long> updates(t.ranks);
  MPI_Allgather(&first.updates, 1, MPI_LONG, updates.data(), 1, MPI_LONG,
                MPI_COMM_WORLD);
  const long replay_errors = Errors(win, table, Expected(t, updates));
  const Pass second = Apply(engine, kind, win, peers, t, first.updates, 0);
  const long hpcc_errors = Errors(win, table, initial);
  const std::string what = std::string(Name(kind)) + " " + Name(engine) + ": ";
  verifier.Expect(replay_errors == 0,
                  what + std::to_string(replay_errors) +
                      " words differ from the replayed updates");
  verifier.Expect(hpcc_errors == 0,
                  what + std::to_string(hpcc_errors) +
                      " words not restored by the second pass");
  double seconds[2] = {first.seconds, second.seconds};
  MPI_Allreduce(MPI_IN_PLACE, seconds, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  long total = 0;
  for (long n : updates) total += n;
  return {2.0 * total / (seconds[0] + seconds[1]) * 1e-9, total};
}

void Benchmark(const Flags& flags, Verifier& verifier) {
  // 8 MiB of table per rank (HPCC sizes it to most of memory; this keeps it
  // beyond the caches of small machines without crowding a 2-core VM).
  const Layout t{flags.quick ? uint64_t{1} << 14 : uint64_t{1} << 20, Size()};
  const double budget_s = flags.quick ? 0.03 : 0.3;
  WindowPair windows(t.words_per_rank * 8, MPI_COMM_WORLD);
  auto* native_table = reinterpret_cast<uint64_t*>(windows.native.base);
  auto* shim_table = reinterpret_cast<uint64_t*>(windows.shim.base);
  std::vector<uint64_t*> peers(t.ranks);
  int all_mapped = 1;
  for (int r = 0; r < t.ranks; ++r) {
    peers[r] = reinterpret_cast<uint64_t*>(MappedPeer(windows.shim.win, r));
    all_mapped = all_mapped && peers[r] != nullptr;
  }
  // The floor needs every part of the table mapped: all ranks on one node.
  MPI_Allreduce(MPI_IN_PLACE, &all_mapped, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  Result floor;  // the same atomic XOR for both kinds of update
  if (all_mapped) {
    floor = Run(Engine::kFloor, Update::kFetchAndOp, windows.shim.win,
                shim_table, peers, t, budget_s, verifier);
  }
  Table out({"update", "ranks", "table_words", "native_updates", "shim_updates",
             "native_gups", "shim_gups", "floor_gups", "speedup",
             "shim/floor"});
  for (Update kind : {Update::kAccumulate, Update::kFetchAndOp}) {
    const Result native = Run(Engine::kNative, kind, windows.native.win,
                              native_table, peers, t, budget_s, verifier);
    const Result shim = Run(Engine::kShim, kind, windows.shim.win, shim_table,
                            peers, t, budget_s, verifier);
    out.Add({Name(kind), std::to_string(t.ranks), std::to_string(t.total()),
             std::to_string(native.updates), std::to_string(shim.updates),
             Sig(native.gups), Sig(shim.gups), Sig(floor.gups),
             Ratio(shim.gups, native.gups), Ratio(floor.gups, shim.gups)});
  }
  if (Rank() == 0) out.Print(flags.csv);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Verifier verifier("gups");
  Benchmark(ParseFlags(argc, argv), verifier);  // frees its windows
  const int rc = verifier.Finish();
  MPI_Finalize();
  return rc;
}
