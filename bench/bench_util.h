// Shared pieces of the MPI benchmark drivers: flags, windows native vs shim
// in the same run, timing, result tables and self-verification.
#ifndef RMASHIM_BENCH_BENCH_UTIL_H_
#define RMASHIM_BENCH_BENCH_UTIL_H_

#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "shim/base/copy.h"

namespace rmashim_bench {

// The CPU floor's copy: the shim's own routine (shim/base/copy.h), not glibc's
// memcpy, whose `rep movsb` runs an order of magnitude slower on AMD EPYC
// (Zen) cores for 32-256 KiB blocks when the destination lies 16 bytes past the
// source modulo a page (a malloc'd buffer against a page-aligned window:
// every get of the benchmarks). A floor must not carry a library's
// pathology; the floor and the shim now copy alike, so shim / floor is the
// shim's own overhead.
inline void FloorCopy(void* dst, const void* src, size_t n) {
  rmashim::CopyBytes(dst, src, n);
}

// ---- Flags ----

// --csv: machine-readable output (scripts/bench_sweep.sh); --quick: fewer
// sizes and iterations (smoke tests, quick sweep); --create: windows made
// with MPI_Win_create on page-aligned memory of the program's own (as OSU's
// benchmarks do) instead of MPI_Win_allocate, where a benchmark offers it.
struct Flags {
  bool csv = false;
  bool quick = false;
  bool create = false;
};

// A benchmark's own option beyond the common ones, and how many values
// follow it on the command line.
struct OwnOption {
  const char* name;
  int values = 0;
};

// The common flags. Any other argument that is not one of `own` (with its
// values) is refused: every rank exits with status 2 after rank 0 says which,
// so a misspelt option never yields a run measured with the defaults.
inline Flags ParseFlags(int argc, char** argv,
                        std::initializer_list<OwnOption> own = {}) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--csv") == 0) {
      flags.csv = true;
      continue;
    }
    if (std::strcmp(argv[i], "--quick") == 0) {
      flags.quick = true;
      continue;
    }
    if (std::strcmp(argv[i], "--create") == 0) {
      flags.create = true;
      continue;
    }
    const OwnOption* match = nullptr;
    for (const OwnOption& o : own) {
      if (std::strcmp(argv[i], o.name) == 0) match = &o;
    }
    if (match != nullptr && i + match->values < argc) {
      i += match->values;
      continue;
    }
    int initialized = 0, rank = 0;
    MPI_Initialized(&initialized);
    if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      std::fprintf(stderr, "%s: %s argument %s\n", argv[0],
                   match != nullptr ? "missing value after" : "unknown",
                   argv[i]);
    }
    // Every rank sees the same command line, so every rank ends here: a
    // clean exit with status 2 (MPI_Abort could end the job before the
    // launcher had forwarded rank 0's message).
    if (initialized) MPI_Finalize();
    std::exit(2);
  }
  return flags;
}

// A benchmark's own option once ParseFlags has accepted the command line:
// the value after `name` (nullptr if absent), and whether `name` is there.
inline const char* OptionValue(int argc, char** argv, const char* name) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  }
  return nullptr;
}
inline bool HasOption(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return true;
  }
  return false;
}

// Target wall time of one timed batch: enough to average out scheduler
// noise, short enough that the sweep fits its time budget.
inline double BatchMs(const Flags& flags) { return flags.quick ? 1.0 : 8.0; }

inline int Rank(MPI_Comm comm = MPI_COMM_WORLD) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

inline int Size(MPI_Comm comm = MPI_COMM_WORLD) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  return size;
}

inline void RequireRanks(int min_ranks) {
  if (Size() < min_ranks) {
    if (Rank() == 0)
      std::fprintf(stderr, "needs at least %d ranks\n", min_ranks);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

// ---- Windows ----

// A window of `bytes` per rank; `managed` false opts out of the shim (info
// key rmashim_managed=false), so native MPICH and the shim run side by side.
inline MPI_Win AllocateWindow(bool managed, MPI_Aint bytes, void* base,
                              MPI_Comm comm = MPI_COMM_WORLD) {
  MPI_Info info;
  MPI_Info_create(&info);
  if (!managed) MPI_Info_set(info, "rmashim_managed", "false");
  MPI_Win win;
  MPI_Win_allocate(bytes, 1, info, comm, base, &win);
  MPI_Info_free(&info);
  return win;
}

inline bool ShimManages(MPI_Win win) {
  using Fn = int (*)(MPI_Win, int*);
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_win_is_managed"));
  int flag = 0;
  return fn != nullptr && fn(win, &flag) == MPI_SUCCESS && flag;
}

// Built with Open MPI (the sweep's osc/sm peer runs) the shim cannot be
// there: a note saying what the columns are instead.
inline void WarnIfNotPreloaded(MPI_Win shim_win) {
  if (Rank() == 0 && !ShimManages(shim_win)) {
#ifdef OPEN_MPI
    std::fprintf(stderr,
                 "note: built with Open MPI; both columns are Open MPI "
                 "windows (osc/sm under --mca osc sm)\n");
#else
    std::fprintf(stderr,
                 "warning: librmashim.so is not preloaded; both columns are "
                 "native MPICH\n");
#endif
  }
}

// The target's window memory mapped into this process (for the CPU floor);
// nullptr when the shim does not manage the window or the target is remote.
inline char* MappedPeer(MPI_Win shim_win, int target) {
  MPI_Aint size = 0;
  int unit = 0;
  char* peer = nullptr;
  if (!ShimManages(shim_win) ||
      MPI_Win_shared_query(shim_win, target, &size, &unit, &peer) !=
          MPI_SUCCESS ||
      size == 0) {
    return nullptr;
  }
  return peer;
}

// One window of each kind over the same communicator, freed together.
struct Window {
  const char* name;  // "native" or "shim": the column it feeds
  MPI_Win win = MPI_WIN_NULL;
  char* base = nullptr;
  bool owns_base = false;  // MPI_Win_create on memory of the program's own
};

// MPI_Win_create over `bytes` of page-aligned memory of the program's own
// (zeroed), `managed` as in AllocateWindow.
inline MPI_Win CreateWindow(bool managed, MPI_Aint bytes, char** base,
                            MPI_Comm comm = MPI_COMM_WORLD) {
  void* memory = nullptr;
  if (posix_memalign(&memory, 4096, std::max<MPI_Aint>(bytes, 1)) != 0) {
    MPI_Abort(comm, 1);
  }
  std::memset(memory, 0, std::max<MPI_Aint>(bytes, 1));
  *base = static_cast<char*>(memory);
  MPI_Info info;
  MPI_Info_create(&info);
  if (!managed) MPI_Info_set(info, "rmashim_managed", "false");
  MPI_Win win;
  MPI_Win_create(memory, bytes, 1, info, comm, &win);
  MPI_Info_free(&info);
  return win;
}

struct WindowPair {
  Window native{"native"}, shim{"shim"};
  // `create`: MPI_Win_create windows (CreateWindow), else MPI_Win_allocate.
  WindowPair(MPI_Aint bytes, MPI_Comm comm, bool create = false) {
    for (Window* w : {&native, &shim}) {
      const bool managed = w == &shim;
      w->owns_base = create;
      w->win = create ? CreateWindow(managed, bytes, &w->base, comm)
                      : AllocateWindow(managed, bytes, &w->base, comm);
    }
    WarnIfNotPreloaded(shim.win);
  }
  ~WindowPair() {
    for (Window* w : {&shim, &native}) {
      MPI_Win_free(&w->win);
      if (w->owns_base) std::free(w->base);
    }
  }
  WindowPair(const WindowPair&) = delete;
  WindowPair& operator=(const WindowPair&) = delete;
};

// Runs `fn` on this rank's own window memory inside an epoch that makes
// remote updates visible to it (passive target: a shared lock on itself;
// after fence or wait the memory is already synchronized).
template <typename Fn>
void OnOwnMemory(MPI_Win win, bool passive, Fn fn) {
  int me = 0;
  MPI_Group group;
  MPI_Win_get_group(win, &group);
  MPI_Group_rank(group, &me);
  MPI_Group_free(&group);
  if (passive) MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win);
  fn();
  if (passive) MPI_Win_unlock(me, win);
}

// ---- Timing ----

// Computes for `us` microseconds without calling MPI (wall clock, so the
// amount does not depend on what else the machine runs).
inline double Busy(double us) {
  const double end = MPI_Wtime() + us * 1e-6;
  double x = 0;
  while (MPI_Wtime() < end) x += 1;
  return x;
}

// Median over 7 batches of the mean time of one `op()`, in microseconds.
template <typename Op>
double TimeUs(int iters, Op op) {
  constexpr int kReps = 7;
  std::vector<double> batches;
  for (int w = 0; w < std::max(1, iters / 10); ++w) op();  // warm-up
  for (int rep = 0; rep < kReps; ++rep) {
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) op();
    batches.push_back((MPI_Wtime() - t0) * 1e6 / iters);
  }
  std::nth_element(batches.begin(), batches.begin() + kReps / 2, batches.end());
  return batches[kReps / 2];
}

// Enough iterations for ~10 ms per batch at memory speed, within bounds.
inline int Iterations(size_t bytes) {
  return static_cast<int>(
      std::clamp<size_t>((size_t{64} << 20) / (bytes + 4096), 20, 20000));
}

// Iterations per batch of about `batch_ms` for an operation that took
// `probe_s` seconds once.
inline int ItersFor(double probe_s, double batch_ms) {
  return static_cast<int>(
      std::clamp(batch_ms * 1e-3 / std::max(probe_s, 1e-9), 2.0, 1e6));
}

// The fastest of a few calls of `body`, in seconds: on a loaded machine one
// call may wait a whole scheduler time slice, which must not shrink the
// batches to a couple of iterations.
template <typename Body>
double ProbeSeconds(Body body) {
  double best = 1e9;
  for (int i = 0; i < 3; ++i) {
    const double t0 = MPI_Wtime();
    body();
    best = std::min(best, MPI_Wtime() - t0);
  }
  return best;
}

// TimeUs with batches of about `batch_ms` (this rank alone).
template <typename Body>
double TimeLocal(double batch_ms, Body body) {
  return TimeUs(ItersFor(ProbeSeconds(body), batch_ms), body);
}

constexpr int kSlowestRank = -1;

// TimeUs on every rank of `comm` with one iteration count for all (bodies
// that synchronize with each other must run equally often), chosen by a
// short probe so that a batch lasts about `batch_ms`. Returns the slowest
// rank's time, or `report_rank`'s.
template <typename Body>
double TimeOnAll(MPI_Comm comm, double batch_ms, Body body,
                 int report_rank = kSlowestRank) {
  MPI_Barrier(comm);
  double probe_s = ProbeSeconds(body);
  MPI_Allreduce(MPI_IN_PLACE, &probe_s, 1, MPI_DOUBLE, MPI_MAX, comm);
  double us = TimeUs(ItersFor(probe_s, batch_ms), body);
  if (report_rank == kSlowestRank) {
    MPI_Allreduce(MPI_IN_PLACE, &us, 1, MPI_DOUBLE, MPI_MAX, comm);
  } else {
    MPI_Bcast(&us, 1, MPI_DOUBLE, report_rank, comm);
  }
  return us;
}

// ---- Output ----

inline std::string Num(double v, int precision = 3) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", precision, v);
  return buf;
}

// `digits` significant digits (rates that span many decades, like GUPS).
inline std::string Sig(double v, int digits = 4) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
  return buf;
}

// "12.3x", or "-" when either side is missing (<= 0).
inline std::string Ratio(double num, double den) {
  if (num <= 0 || den <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fx", num / den);
  return buf;
}

// A result table: aligned text for people, CSV (--csv) for the sweep. Text
// columns are right-aligned when they hold numbers.
class Table {
 public:
  explicit Table(std::vector<std::string> columns)
      : columns_(std::move(columns)) {}

  void Add(std::vector<std::string> cells) {
    cells.resize(columns_.size());
    rows_.push_back(std::move(cells));
  }

  void Print(bool csv) const {
    if (csv) {
      PrintCsvLine(columns_);
      for (const auto& row : rows_) PrintCsvLine(row);
      return;
    }
    std::vector<size_t> width(columns_.size());
    std::vector<bool> numeric(columns_.size(), true);
    for (size_t c = 0; c < columns_.size(); ++c) {
      width[c] = columns_[c].size();
      for (const auto& row : rows_) {
        width[c] = std::max(width[c], row[c].size());
        if (!row[c].empty() && !IsNumber(row[c])) numeric[c] = false;
      }
    }
    auto line = [&](const std::vector<std::string>& cells) {
      std::string out;
      for (size_t c = 0; c < cells.size(); ++c) {
        const std::string pad(width[c] - cells[c].size(), ' ');
        if (c > 0) out += "  ";
        out += numeric[c] ? pad + cells[c] : cells[c] + pad;
      }
      while (!out.empty() && out.back() == ' ') out.pop_back();
      std::printf("%s\n", out.c_str());
    };
    line(columns_);
    for (const auto& row : rows_) line(row);
  }

 private:
  static bool IsNumber(const std::string& s) {
    return s == "-" || std::isdigit(static_cast<unsigned char>(s[0])) ||
           (s.size() > 1 && s[0] == '-');
  }
  static void PrintCsvLine(const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) out += ',';
      for (char ch : cells[c]) out += ch == ',' ? ';' : ch;  // keep columns
    }
    std::printf("%s\n", out.c_str());
  }

  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// The result of rma_latency, rma_atomics and rma_sync (their CSV columns are
// fixed: scripts/demo.sh and README read them).
struct Row {
  std::string test;
  size_t bytes;
  double native_us, shim_us, floor_us;  // floor_us <= 0: no floor
  std::string note;
};

inline void PrintRows(const std::vector<Row>& rows, bool csv) {
  if (csv) {
    Table table({"test", "bytes", "native_us", "shim_us", "floor_us"});
    for (const Row& r : rows) {
      table.Add({r.test, std::to_string(r.bytes), Num(r.native_us, 4),
                 Num(r.shim_us, 4), Num(r.floor_us, 4)});
    }
    table.Print(true);
    return;
  }
  Table table({"test", "bytes", "native us", "shim us", "floor us", "speedup",
               "shim/floor", "note"});
  for (const Row& r : rows) {
    const bool floor = r.floor_us > 0;
    table.Add({r.test, std::to_string(r.bytes), Num(r.native_us),
               Num(r.shim_us), floor ? Num(r.floor_us) : "-",
               Ratio(r.native_us, r.shim_us),
               floor ? Ratio(r.shim_us, r.floor_us) : "-", r.note});
  }
  table.Print(false);
}

// ---- Self-verification ----

// Collects failed checks on every rank; Finish() reduces them over
// MPI_COMM_WORLD, prints one verdict line on rank 0 (stderr, so CSV on
// stdout stays clean; bench/smoke_test.sh greps it) and gives the exit code.
class Verifier {
 public:
  explicit Verifier(std::string program) : program_(std::move(program)) {}

  // Records one check; `what` is printed (rank-tagged) when it fails.
  bool Expect(bool ok, const std::string& what) {
    ++checks_;
    if (!ok) {
      ++failures_;
      if (failures_ <= 10) {
        std::fprintf(stderr, "%s: rank %d: CHECK FAILED: %s\n",
                     program_.c_str(), Rank(), what.c_str());
      }
    }
    return ok;
  }

  int Finish() {
    long counts[2] = {checks_, failures_};
    MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (Rank() == 0) {
      if (counts[1] == 0) {
        std::fprintf(stderr, "%s: verification passed (%ld checks)\n",
                     program_.c_str(), counts[0]);
      } else {
        std::fprintf(stderr, "%s: verification FAILED (%ld of %ld checks)\n",
                     program_.c_str(), counts[1], counts[0]);
      }
    }
    return counts[1] == 0 ? 0 : 1;
  }

 private:
  std::string program_;
  long checks_ = 0, failures_ = 0;
};

}  // namespace rmashim_bench

#endif  // RMASHIM_BENCH_BENCH_UTIL_H_
