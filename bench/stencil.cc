// Five-point 2D stencil of the PGAS paper: -laplace(u) = 1 on an N x N grid
// of 4-byte floats, u = 0 on the boundary, Gauss-Seidel until the largest
// update falls below a tolerance; rows decomposed over ranks, halo rows
// exchanged with neighbours. Time to convergence of three versions in one
// run:
//   native, shim: blocking puts (MPI_Put + MPI_Win_flush) of the boundary
//                 rows into the neighbours' halo slots, then a flag
//                 (MPI_Accumulate MPI_REPLACE + flush) the neighbour polls
//                 for; on a native MPICH window and on an rmashim window;
//   p2p:          MPI_Isend/MPI_Irecv of the same rows.
// Red-black ordering (a halo exchange after each colour) makes the result
// independent of the decomposition, so every version must reproduce a
// serial solve bit for bit; that is checked.
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench_util.h"

namespace {

using namespace rmashim_bench;  // NOLINT

constexpr int kCheckEvery = 10;  // iterations between convergence checks
constexpr float kTolerance = 1e-7f;

// This rank's rows [first, first + rows) of the 1-based interior rows, each
// with its two boundary columns.
struct Slab {
  int n, first, rows;
  std::vector<float> u;  // rows x (n + 2)
  float* row(int i) { return &u[static_cast<size_t>(i) * (n + 2)]; }
};

Slab Decompose(int n, int rank, int ranks) {
  const int base = n / ranks, extra = n % ranks;
  const int rows = base + (rank < extra);
  const int first = 1 + rank * base + std::min(rank, extra);
  return {n, first, rows,
          std::vector<float>(static_cast<size_t>(rows) * (n + 2), 0.f)};
}

// How halo rows travel. After Exchange(), Above() and Below() are the rows
// just outside the slab (zeros at the domain boundary).
class Halo {
 public:
  virtual ~Halo() = default;
  virtual void Exchange(const float* first_row, const float* last_row) = 0;
  virtual const float* Above() const = 0;
  virtual const float* Below() const = 0;
};

// Neighbours in the row decomposition (MPI_PROC_NULL at the boundary).
struct Neighbours {
  int up, down;
  explicit Neighbours(MPI_Comm comm) {
    const int rank = Rank(comm), size = Size(comm);
    up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    down = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
  }
};

class TwoSidedHalo : public Halo {
 public:
  TwoSidedHalo(MPI_Comm comm, int n)
      : comm_(comm), nb_(comm), above_(n + 2), below_(n + 2) {}
  void Exchange(const float* first_row, const float* last_row) override {
    const int count = static_cast<int>(above_.size());
    MPI_Request req[4];
    MPI_Irecv(above_.data(), count, MPI_FLOAT, nb_.up, 0, comm_, &req[0]);
    MPI_Irecv(below_.data(), count, MPI_FLOAT, nb_.down, 1, comm_, &req[1]);
    MPI_Isend(first_row, count, MPI_FLOAT, nb_.up, 1, comm_, &req[2]);
    MPI_Isend(last_row, count, MPI_FLOAT, nb_.down, 0, comm_, &req[3]);
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
  }
  const float* Above() const override { return above_.data(); }
  const float* Below() const override { return below_.data(); }

 private:
  MPI_Comm comm_;
  Neighbours nb_;
  std::vector<float> above_, below_;  // stay zero at the boundary
};

// Halo slots in window memory: two parities (exchange e writes parity e % 2,
// so a neighbour one exchange ahead never overwrites a row still being
// read), two sides, then one flag per side holding the last exchange whose
// row has arrived.
class OneSidedHalo : public Halo {
 public:
  OneSidedHalo(MPI_Comm comm, MPI_Win win, char* base, int n)
      : win_(win), nb_(comm), me_(Rank(comm)), row_(n + 2), zeros_(n + 2, 0.f) {
    slots_ = reinterpret_cast<float*>(base);
    flags_disp_ = static_cast<MPI_Aint>(4 * row_ * sizeof(float));
    OnOwnMemory(win, /*passive=*/true, [&] {
      std::fill(slots_, slots_ + 4 * row_, 0.f);
      std::fill_n(reinterpret_cast<int64_t*>(base + flags_disp_), 2,
                  int64_t{0});
    });
    MPI_Barrier(comm);
    MPI_Win_lock_all(0, win_);
  }
  ~OneSidedHalo() override { MPI_Win_unlock_all(win_); }

  static MPI_Aint WindowBytes(int n) {
    return 4 * (n + 2) * sizeof(float) + 2 * sizeof(int64_t);
  }

  void Exchange(const float* first_row, const float* last_row) override {
    ++exchange_;
    parity_ = exchange_ % 2;
    // My first row is the up neighbour's Below, my last the down one's Above.
    Send(nb_.up, first_row, kBelow);
    Send(nb_.down, last_row, kAbove);
    if (nb_.up != MPI_PROC_NULL) WaitFor(kAbove);
    if (nb_.down != MPI_PROC_NULL) WaitFor(kBelow);
    MPI_Win_sync(win_);  // the rows that arrived, before reading them
  }
  const float* Above() const override {
    return nb_.up == MPI_PROC_NULL ? zeros_.data() : Slot(parity_, kAbove);
  }
  const float* Below() const override {
    return nb_.down == MPI_PROC_NULL ? zeros_.data() : Slot(parity_, kBelow);
  }

 private:
  enum Side { kAbove = 0, kBelow = 1 };

  const float* Slot(int parity, Side side) const {
    return slots_ + (2 * parity + side) * row_;
  }
  MPI_Aint SlotDisp(Side side) const {
    return static_cast<MPI_Aint>((2 * parity_ + side) * row_ * sizeof(float));
  }
  MPI_Aint FlagDisp(Side side) const {
    return flags_disp_ + side * sizeof(int64_t);
  }

  void Send(int target, const float* row, Side side) {
    if (target == MPI_PROC_NULL) return;
    const int count = static_cast<int>(row_);
    MPI_Put(row, count, MPI_FLOAT, target, SlotDisp(side), count, MPI_FLOAT,
            win_);
    MPI_Win_flush(target, win_);  // blocking put: the row is there
    MPI_Accumulate(&exchange_, 1, MPI_INT64_T, target, FlagDisp(side), 1,
                   MPI_INT64_T, MPI_REPLACE, win_);
    MPI_Win_flush(target, win_);
  }

  // Polls with an atomic read of my own flag (natively it also drives MPI
  // progress); after a while it yields the core, which the neighbour that
  // has to write the flag may be waiting for when ranks outnumber cores.
  void WaitFor(Side side) {
    constexpr int kPollsBeforeYield = 256;
    for (int polls = 1;; ++polls) {
      int64_t seen = 0;
      MPI_Fetch_and_op(nullptr, &seen, MPI_INT64_T, me_, FlagDisp(side),
                       MPI_NO_OP, win_);
      MPI_Win_flush(me_, win_);
      if (seen >= exchange_) return;
      if (polls % kPollsBeforeYield == 0) sched_yield();
    }
  }

  MPI_Win win_;
  Neighbours nb_;
  int me_;
  size_t row_;
  std::vector<float> zeros_;
  float* slots_;
  MPI_Aint flags_disp_;
  int64_t exchange_ = 0;
  int parity_ = 0;
};

// Updates the points of one colour ((global row + column) % 2); returns the
// largest change.
float Sweep(Slab& s, const Halo& halo, int colour) {
  const float h = 1.f / static_cast<float>(s.n + 1);
  const float h2f = h * h;  // f = 1
  float delta = 0;
  for (int i = 0; i < s.rows; ++i) {
    const float* up = i == 0 ? halo.Above() : s.row(i - 1);
    const float* down = i + 1 == s.rows ? halo.Below() : s.row(i + 1);
    float* u = s.row(i);
    for (int j = 1 + (s.first + i + 1 + colour) % 2; j <= s.n; j += 2) {
      const float next = 0.25f * (up[j] + down[j] + u[j - 1] + u[j + 1] + h2f);
      delta = std::max(delta, std::fabs(next - u[j]));
      u[j] = next;
    }
  }
  return delta;
}

struct Solution {
  bool converged = false;
  int iterations = 0;
  double seconds = 0;
  std::vector<float> u;  // the whole grid on rank 0, rows x (n + 2)
};

// Solves until convergence, or gives up after `limit_s` seconds (a
// heavily oversubscribed machine can slow a version down 1000-fold).
Solution Solve(MPI_Comm comm, int n, Halo& halo, double limit_s) {
  Slab s = Decompose(n, Rank(comm), Size(comm));
  Solution out;
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  halo.Exchange(s.row(0), s.row(s.rows - 1));
  for (bool done = false; !done;) {
    float delta = 0;
    for (int colour : {0, 1}) {
      delta = std::max(delta, Sweep(s, halo, colour));
      halo.Exchange(s.row(0), s.row(s.rows - 1));
    }
    if (++out.iterations % kCheckEvery == 0) {
      double check[2] = {delta, MPI_Wtime() - t0};
      MPI_Allreduce(MPI_IN_PLACE, check, 2, MPI_DOUBLE, MPI_MAX, comm);
      out.converged = check[0] < kTolerance;
      done = out.converged || check[1] > limit_s;
    }
  }
  out.seconds = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &out.seconds, 1, MPI_DOUBLE, MPI_MAX, comm);
  // Gather the grid on rank 0 for the comparison.
  const int row = n + 2, ranks = Size(comm);
  std::vector<int> counts(ranks), displs(ranks);
  for (int r = 0; r < ranks; ++r) {
    const Slab other = Decompose(n, r, ranks);
    counts[r] = other.rows * row;
    displs[r] = (other.first - 1) * row;
  }
  if (Rank(comm) == 0) out.u.resize(static_cast<size_t>(n) * row);
  MPI_Gatherv(s.u.data(), static_cast<int>(s.u.size()), MPI_FLOAT, out.u.data(),
              counts.data(), displs.data(), MPI_FLOAT, 0, comm);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const Flags flags = ParseFlags(argc, argv);
  Verifier verifier("stencil");
  const int n = flags.quick ? 32 : 64;  // the paper's single-node grid: 64 x 64
  const int reps = flags.quick ? 1 : 3;
  const double limit_s = flags.quick ? 10 : 30;  // per solve
  RequireRanks(1);
  if (Size() > n) {
    if (Rank() == 0) std::fprintf(stderr, "at most %d ranks\n", n);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  {
    // The serial reference, on rank 0 alone.
    Solution serial;
    if (Rank() == 0) {
      TwoSidedHalo none(MPI_COMM_SELF, n);  // no neighbours: zero halos
      serial = Solve(MPI_COMM_SELF, n, none, 1e9);
    }
    WindowPair windows(OneSidedHalo::WindowBytes(n), MPI_COMM_WORLD);
    struct Version {
      const char* name;
      std::vector<double> seconds;  // empty: gave up
      bool gave_up = false;
    };
    Version versions[] = {{"native", {}}, {"shim", {}}, {"p2p", {}}};
    for (int rep = 0; rep < reps; ++rep) {
      for (Version& v : versions) {
        if (v.gave_up) continue;
        std::unique_ptr<Halo> halo;
        const std::string name = v.name;
        if (name == "p2p") {
          halo = std::make_unique<TwoSidedHalo>(MPI_COMM_WORLD, n);
        } else {
          const Window& w = name == "native" ? windows.native : windows.shim;
          halo =
              std::make_unique<OneSidedHalo>(MPI_COMM_WORLD, w.win, w.base, n);
        }
        const Solution s = Solve(MPI_COMM_WORLD, n, *halo, limit_s);
        if (!s.converged) {  // too slow here, not wrong: no verdict
          if (Rank() == 0) {
            std::fprintf(stderr,
                         "stencil: %s gave up after %.0f s (%d iterations)\n",
                         v.name, s.seconds, s.iterations);
          }
          v.gave_up = true;
          v.seconds.clear();
          continue;
        }
        v.seconds.push_back(s.seconds);
        if (Rank() == 0) {
          verifier.Expect(s.iterations == serial.iterations && s.u == serial.u,
                          name + ": result differs from the serial solve (" +
                              std::to_string(s.iterations) + " vs " +
                              std::to_string(serial.iterations) +
                              " iterations)");
        }
      }
    }
    auto median = [](std::vector<double> x) {
      if (x.empty()) return 0.0;  // printed as "-"
      std::nth_element(x.begin(), x.begin() + x.size() / 2, x.end());
      return x[x.size() / 2];
    };
    auto seconds = [](double s) {
      return s > 0 ? Num(s, 5) : std::string("-");
    };
    int serial_iterations = serial.iterations;  // every version's count
    MPI_Bcast(&serial_iterations, 1, MPI_INT, 0, MPI_COMM_WORLD);
    const double native = median(versions[0].seconds),
                 shim = median(versions[1].seconds),
                 p2p = median(versions[2].seconds);
    Table table({"grid", "ranks", "iterations", "native_s", "shim_s", "p2p_s",
                 "speedup", "shim/p2p", "native/p2p"});
    table.Add({std::to_string(n) + "x" + std::to_string(n),
               std::to_string(Size()), std::to_string(serial_iterations),
               seconds(native), seconds(shim), seconds(p2p),
               Ratio(native, shim), Ratio(shim, p2p), Ratio(native, p2p)});
    if (Rank() == 0) table.Print(flags.csv);
  }
  const int rc = verifier.Finish();
  MPI_Finalize();
  return rc;
}
