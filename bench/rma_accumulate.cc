// Bulk accumulates: MPI_Accumulate and MPI_Get_accumulate latency and
// bandwidth, 8 B to 4 MiB, for int8 (MPI_SIGNED_CHAR), int32 (MPI_INT),
// int64 (MPI_LONG), float and double with MPI_SUM, MPI_MAX and MPI_REPLACE.
// Three columns measured batch by batch, interleaved, in one run:
//   native: the MPI library's own window (with the shim preloaded, a window
//           opted out with info rmashim_managed=false);
//   shim:   a window the shim manages (only when librmashim.so is preloaded);
//   floor:  the same update done by the CPU straight on the target's mapped
//           memory, a plain loop the compiler vectorizes (this file is built
//           with -O3; AVX2 where the CPU has it, like the shim's loops;
//           get_accumulate: memcpy of the old values first), then a memory
//           fence (what a flush must at least cost).
// Rank 0 is the origin, rank 1 the target, which waits in MPI_Barrier (MPI
// progress) while the origin measures; other ranks idle. The origin holds
// lock_all on both windows and completes with MPI_Win_flush:
//   latency:   one operation + flush per iteration;
//   bandwidth: a window of operations (up to 64, at most 16 MiB) + flush.
// Reported: the fastest of --batches (default 21) batches of about 1 ms per
// column (short batches, so on a loaded machine some escape preemption); the
// median too. A column that has spent --budget-ms (250) on a row stops after
// 3 batches (native MPICH on a loaded machine). The last column says whether
// the cell's results were right
// ("WRONG:<columns>" otherwise; the exit status is then 1). Every (call, type,
// op, size) is verified on each column before it is timed: target T0, two
// operations with origin O, then the target must be op(op(T0, O), O) and the
// fetched values T0 and op(T0, O), against a scalar reference computed here.
//
// The program is MPI-only apart from an optional dlsym of the shim, so
// scripts/bench_accumulate.sh also builds it with Open MPI's mpicxx and runs
// it under osc/sm (there the native column is osc/sm and the floor uses an
// MPI_Win_allocate_shared window's memory).
//
//   rma_accumulate [--csv] [--quick] [--key] [--batches N] [--budget-ms MS]
//     --quick  verify every cell, time a few (smoke test)
//     --key    time only the key rows (int8 and float, MPI_SUM, 8 B, 4 KiB,
//              1 MiB), e.g. for a run with nothing preloaded
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "bench/accumulate_floor.h"
#include "bench/bench_util.h"

namespace {

using namespace rmashim_bench;  // NOLINT

constexpr int kOrigin = 0;
constexpr int kTarget = 1;
constexpr size_t kMaxBytes = size_t{4} << 20;
constexpr size_t kEpochBytes = size_t{16} << 20;  // bandwidth: bytes per epoch
constexpr int kMaxPerEpoch = 64;
constexpr int kMinBatches = 3;

// ---- Types.

struct TypeInfo {
  const char* name;
  MPI_Datatype mpi;
  size_t size;
  int index;
};

std::vector<TypeInfo> Types() {
  return {{"int8", MPI_SIGNED_CHAR, 1, 0},
          {"int32", MPI_INT, 4, 1},
          {"int64", MPI_LONG, 8, 2},
          {"float", MPI_FLOAT, 4, 3},
          {"double", MPI_DOUBLE, 8, 4}};
}

template <typename F>
void WithType(int index, F f) {
  switch (index) {
    case 0:
      f(int8_t{});
      break;
    case 1:
      f(int32_t{});
      break;
    case 2:
      f(int64_t{});
      break;
    case 3:
      f(float{});
      break;
    case 4:
      f(double{});
      break;
  }
}

template <typename F>
void WithOp(int index, F f) {
  switch (index) {
    case 0:
      f(SumOp{});
      break;
    case 1:
      f(MaxOp{});
      break;
    case 2:
      f(ReplaceOp{});
      break;
  }
}
constexpr const char* kOpNames[] = {"SUM", "MAX", "REPLACE"};

enum class Call { kAccumulate, kGetAccumulate };
const char* Name(Call c) {
  return c == Call::kAccumulate ? "accumulate" : "get_accumulate";
}

// ---- The run.

struct Args {
  Flags flags;
  bool key = false;
  int batches = 21;
  double batch_ms = 1.0;
  // A column stops after 3 batches once it has spent this long on a row
  // (native MPICH on a loaded machine: milliseconds per large operation).
  double budget_ms = 250;
};

Args ParseArgs(int argc, char** argv) {
  Args a;
  a.flags =
      ParseFlags(argc, argv, {{"--key"}, {"--batches", 1}, {"--budget-ms", 1}});
  if (a.flags.quick) a.batches = 3, a.batch_ms = 0.5;
  a.key = HasOption(argc, argv, "--key");
  if (const char* v = OptionValue(argc, argv, "--batches")) {
    a.batches = std::max(1, std::atoi(v));
  }
  if (const char* v = OptionValue(argc, argv, "--budget-ms")) {
    a.budget_ms = std::atof(v);
  }
  return a;
}

bool ShimPreloaded() {
  return dlsym(RTLD_DEFAULT, "rmashim_win_is_managed") != nullptr;
}

std::vector<size_t> Sizes() {
  return {8, 64, 512, 4096, 32768, 262144, size_t{1} << 20, kMaxBytes};
}

bool Timed(const Args& a, const TypeInfo& type, int op, size_t bytes) {
  const bool key_size =
      bytes == 8 || bytes == 4096 || bytes == (size_t{1} << 20);
  const bool key_row = (type.index == 0 || type.index == 3) && op == 0;
  if (a.key) return key_row && key_size;
  if (a.flags.quick)
    return key_row && (bytes == 8 || bytes == (size_t{1} << 20));
  return true;
}

int PerEpoch(size_t bytes) {
  return static_cast<int>(
      std::clamp<size_t>(kEpochBytes / bytes, 1, kMaxPerEpoch));
}

struct Column {
  Column(const char* n, std::function<void()> b)
      : name(n), body(std::move(b)) {}
  const char* name;
  std::function<void()> body;  // one iteration: per_epoch operations, completed
  int iters = 0;
  double spent_s = 0;
  std::vector<double> us;  // per operation, one per batch
  double Best() const {
    return us.empty() ? 0 : *std::min_element(us.begin(), us.end());
  }
  double Median() const {
    if (us.empty()) return 0;
    std::vector<double> v = us;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  }
};

class Bench {
 public:
  Bench(const Args& args, MPI_Comm pair) : args_(args), pair_(pair) {
    origin_ = Rank(pair) == kOrigin;
    shim_ = ShimPreloaded();
    native_ = AllocateWindow(false, kMaxBytes, &native_base_, pair);
    if (shim_) {
      managed_ = AllocateWindow(true, kMaxBytes, &managed_base_, pair);
      if (!ShimManages(managed_)) {
        if (origin_)
          std::fprintf(stderr,
                       "rma_accumulate: the shim does not manage its window\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      // The shim's own target memory.
      floor_ = reinterpret_cast<std::byte*>(MappedPeer(managed_, kTarget));
    } else {
      // The floor on node-shared memory of the MPI library: the same kind of
      // memory the native window's target lives in.
      MPI_Win_allocate_shared(origin_ ? 0 : kMaxBytes, 1, MPI_INFO_NULL, pair,
                              &shared_base_, &shared_);
      MPI_Aint size = 0;
      int unit = 0;
      MPI_Win_shared_query(shared_, kTarget, &size, &unit, &floor_);
    }
    if (origin_) {
      MPI_Win_lock_all(0, native_);
      if (shim_) MPI_Win_lock_all(0, managed_);
      origin_buf_.resize(kMaxBytes);
      results_.resize(kEpochBytes);
      check_.resize(kMaxBytes);
    }
  }
  ~Bench() {
    if (origin_) {
      MPI_Win_unlock_all(native_);
      if (shim_) MPI_Win_unlock_all(managed_);
    }
    if (shim_) MPI_Win_free(&managed_);
    if (shared_ != MPI_WIN_NULL) MPI_Win_free(&shared_);
    MPI_Win_free(&native_);
  }

  bool shim() const { return shim_; }

  // One (call, type, op, size): verified on every column, then timed if
  // `timed`; the rows go to `table` on the origin.
  void Cell(Call call, const TypeInfo& type, int op, size_t bytes, bool timed,
            Verifier& v, Table& table) {
    if (origin_) {
      WithType(type.index, [&](auto t) {
        WithOp(op, [&](auto o) {
          using T = decltype(t);
          using Op = decltype(o);
          const std::string failed = Verify<T, Op>(call, type, bytes, v);
          if (timed) Time<T, Op>(call, type, bytes, failed, table);
        });
      });
    }
    MPI_Barrier(pair_);  // the target progresses MPI here
  }

 private:
  template <typename T, typename Op>
  void Issue(Call call, MPI_Win win, const TypeInfo& type, size_t bytes,
             std::byte* result) {
    const int n = static_cast<int>(bytes / sizeof(T));
    if (call == Call::kAccumulate) {
      MPI_Accumulate(origin_buf_.data(), n, type.mpi, kTarget, 0, n, type.mpi,
                     Op::Mpi(), win);
    } else {
      MPI_Get_accumulate(origin_buf_.data(), n, type.mpi, result, n, type.mpi,
                         kTarget, 0, n, type.mpi, Op::Mpi(), win);
    }
  }

  template <typename T, typename Op>
  void Floor(Call call, size_t bytes, std::byte* result) {
    auto* t = reinterpret_cast<T*>(floor_);
    const auto* o = reinterpret_cast<const T*>(origin_buf_.data());
    if (call == Call::kAccumulate) {
      FloorAccumulate<T, Op>(t, o, bytes / sizeof(T));
    } else {
      FloorGetAccumulate<T, Op>(t, o, reinterpret_cast<T*>(result),
                                bytes / sizeof(T));
    }
  }

  // Fills `buf` with `n` elements of Pattern(seed).
  template <typename T>
  static void Fill(std::byte* buf, size_t n, int seed) {
    for (size_t i = 0; i < n; ++i) {
      const T x = Pattern<T>(i, seed);
      std::memcpy(buf + i * sizeof(T), &x, sizeof(T));
    }
  }
  // Whether `buf` holds op^k(T0, O) element by element (k = 0, 1, 2).
  template <typename T, typename Op>
  static bool Holds(const std::byte* buf, size_t n, int k, int seed) {
    for (size_t i = 0; i < n; ++i) {
      T want = Pattern<T>(i, seed);
      for (int j = 0; j < k; ++j)
        want = Op::Apply(want, Pattern<T>(i, seed + 1));
      T got;
      std::memcpy(&got, buf + i * sizeof(T), sizeof(T));
      if (std::memcmp(&got, &want, sizeof(T)) != 0) return false;
    }
    return true;
  }

  // Returns the columns that failed ("" when all passed).
  template <typename T, typename Op>
  std::string Verify(Call call, const TypeInfo& type, size_t bytes,
                     Verifier& v) {
    const size_t n = bytes / sizeof(T);
    const int seed = static_cast<int>(bytes % 1000) + type.index * 7 +
                     static_cast<int>(call);
    Fill<T>(origin_buf_.data(), n, seed + 1);
    std::byte* r1 = results_.data();
    std::byte* r2 = results_.data() + bytes;
    const bool fetch = call == Call::kGetAccumulate;
    const std::string what = std::string(Name(call)) + " " + type.name + " " +
                             Op::kName + " " + std::to_string(bytes) + " B ";
    std::string failed;
    auto check = [&](const char* column, const std::byte* target) {
      bool ok = v.Expect(Holds<T, Op>(target, n, 2, seed),
                         what + column + ": wrong target");
      if (fetch) {
        ok &= v.Expect(Holds<T, Op>(r1, n, 0, seed),
                       what + column + ": first result wrong");
        ok &= v.Expect(Holds<T, Op>(r2, n, 1, seed),
                       what + column + ": second result wrong");
      }
      if (!ok) failed += std::string(failed.empty() ? "" : "+") + column;
    };
    const int count = static_cast<int>(n);
    for (MPI_Win win : {native_, managed_}) {
      if (win == MPI_WIN_NULL) continue;
      Fill<T>(check_.data(), n, seed);
      MPI_Put(check_.data(), count, type.mpi, kTarget, 0, count, type.mpi, win);
      MPI_Win_flush(kTarget, win);
      std::memset(results_.data(), 0, 2 * bytes);
      Issue<T, Op>(call, win, type, bytes, r1);
      Issue<T, Op>(call, win, type, bytes, r2);  // ordered after the first
      MPI_Win_flush(kTarget, win);
      std::memset(check_.data(), 0, bytes);
      MPI_Get(check_.data(), count, type.mpi, kTarget, 0, count, type.mpi, win);
      MPI_Win_flush(kTarget, win);
      check(win == native_ ? "native" : "shim", check_.data());
    }
    Fill<T>(floor_, n, seed);
    std::memset(results_.data(), 0, 2 * bytes);
    Floor<T, Op>(call, bytes, r1);
    Floor<T, Op>(call, bytes, r2);
    check("floor", floor_);
    return failed;
  }

  template <typename T, typename Op>
  void Time(Call call, const TypeInfo& type, size_t bytes,
            const std::string& failed, Table& table) {
    Fill<T>(origin_buf_.data(), bytes / sizeof(T), 3);
    auto fence = [] { std::atomic_thread_fence(std::memory_order_seq_cst); };
    for (int per_epoch : {1, PerEpoch(bytes)}) {
      auto result = [&](int k) { return results_.data() + k * bytes; };
      auto mpi = [&](MPI_Win win) {
        return [&, win] {
          for (int k = 0; k < per_epoch; ++k)
            Issue<T, Op>(call, win, type, bytes, result(k));
          MPI_Win_flush(kTarget, win);
        };
      };
      std::vector<Column> columns;
      columns.emplace_back("native", mpi(native_));
      if (shim_) columns.emplace_back("shim", mpi(managed_));
      columns.emplace_back("floor", [&] {
        for (int k = 0; k < per_epoch; ++k)
          Floor<T, Op>(call, bytes, result(k));
        fence();
      });
      for (Column& c : columns) {
        c.iters = ItersFor(ProbeSeconds(c.body), args_.batch_ms);
      }
      for (int b = 0; b < args_.batches; ++b) {  // interleaved batches
        for (Column& c : columns) {
          if (b >= kMinBatches && c.spent_s * 1e3 > args_.budget_ms) continue;
          const double t0 = MPI_Wtime();
          for (int i = 0; i < c.iters; ++i) c.body();
          const double s = MPI_Wtime() - t0;
          c.spent_s += s;
          c.us.push_back(s * 1e6 / c.iters / per_epoch);
        }
      }
      const Column& native = columns.front();
      const Column& floor = columns.back();
      const Column* shim = shim_ ? &columns[1] : nullptr;
      const double shim_us = shim ? shim->Best() : 0;
      table.Add(
          {Name(call), type.name, Op::kName,
           per_epoch == 1 ? "latency" : "bandwidth", std::to_string(bytes),
           std::to_string(per_epoch), Num(native.Best(), 4),
           shim ? Num(shim_us, 4) : "-", Num(floor.Best(), 4),
           shim ? Ratio(shim_us, floor.Best()) : "-",
           shim ? Ratio(native.Best(), shim_us) : "-", Num(native.Median(), 4),
           shim ? Num(shim->Median(), 4) : "-", Num(floor.Median(), 4),
           failed.empty() ? "ok" : "WRONG:" + failed});
    }
  }

  Args args_;
  MPI_Comm pair_;
  bool origin_ = false;
  bool shim_ = false;
  MPI_Win native_ = MPI_WIN_NULL, managed_ = MPI_WIN_NULL,
          shared_ = MPI_WIN_NULL;
  char* native_base_ = nullptr;
  char* managed_base_ = nullptr;
  char* shared_base_ = nullptr;
  std::byte* floor_ = nullptr;  // the target's memory, mapped here (origin)
  std::vector<std::byte> origin_buf_, results_, check_;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  RequireRanks(2);
  const Args args = ParseArgs(argc, argv);
  Verifier verifier("rma_accumulate");
  MPI_Comm pair;
  MPI_Comm_split(MPI_COMM_WORLD, Rank() < 2 ? 0 : MPI_UNDEFINED, Rank(), &pair);
  if (pair != MPI_COMM_NULL) {
    if (Rank() == 0) {
      char version[MPI_MAX_LIBRARY_VERSION_STRING];
      int len = 0;
      MPI_Get_library_version(version, &len);
      std::string first(version, strcspn(version, "\n"));
      std::fprintf(stderr, "rma_accumulate: %s; shim %s; floor loops %s\n",
                   first.c_str(),
                   ShimPreloaded() ? "preloaded" : "not preloaded",
                   kFloorAvx2 ? "AVX2" : "SSE2");
    }
    Table table({"call", "type", "op", "metric", "bytes", "per_epoch",
                 "native_us", "shim_us", "floor_us", "shim/floor",
                 "native/shim", "native_median_us", "shim_median_us",
                 "floor_median_us", "verified"});
    const double start = MPI_Wtime();
    {
      Bench bench(args, pair);
      for (Call call : {Call::kAccumulate, Call::kGetAccumulate}) {
        for (const TypeInfo& type : Types()) {
          for (int op = 0; op < 3; ++op) {
            for (size_t bytes : Sizes()) {
              if (bytes < type.size) continue;
              bench.Cell(call, type, op, bytes, Timed(args, type, op, bytes),
                         verifier, table);
            }
            if (Rank() == 0) {  // progress, on stderr
              std::fprintf(stderr, "rma_accumulate: %s %s %s done at %.0f s\n",
                           Name(call), type.name, kOpNames[op],
                           MPI_Wtime() - start);
            }
          }
        }
      }
    }
    if (Rank(pair) == kOrigin) table.Print(args.flags.csv);
    MPI_Comm_free(&pair);
  }
  const int rc = verifier.Finish();
  MPI_Finalize();
  return rc;
}
