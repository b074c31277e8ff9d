// Fence and PSCW halo exchanges on managed windows, on a ring and on a
// periodic 2D grid, checked against a serial reference: plain fence, fence
// with assertions, PSCW and PSCW with MPI_MODE_NOCHECK.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/mpi/shim_active_target_util.h"
#include "tests/mpi_test_util.h"

namespace rmashim_test::active_target {
namespace {

constexpr int64_t kMod = 1000003;

// How a halo exchange synchronizes.
enum class Sync {
  kFence,         // fence(0) before and after the exchange
  kFenceAsserts,  // NOPRECEDE / NOSUCCEED / NOSTORE / NOPUT where they hold
  kPscw,          // post/start/complete/wait with the neighbours
  kPscwNoCheck,   // the same with MPI_MODE_NOCHECK (a barrier orders them)
};

const char* SyncName(Sync s) {
  switch (s) {
    case Sync::kFence:
      return "Fence";
    case Sync::kFenceAsserts:
      return "FenceAsserts";
    case Sync::kPscw:
      return "Pscw";
    case Sync::kPscwNoCheck:
      return "PscwNoCheck";
  }
  return "Unknown";
}

// The halo-exchange domains below (Ring, Grid) split a periodic array over
// the ranks of comm(): each rank owns a block of cells plus a one-cell halo
// in its window, exchanges halos with puts (even steps) or gets (odd
// steps), then applies an integer stencil. Reference(steps) is the serial
// computation of this rank's owned cells, in the order Owned() lists them.

int64_t Seed(int64_t global_index) { return (global_index * 7919 + 17) % kMod; }

// 1D ring: rank r owns global cells [r*n, (r+1)*n); window cells are
// [left ghost, n owned, right ghost].
class Ring {
 public:
  static constexpr int kN = 8;
  explicit Ring(MPI_Comm comm) : comm_(comm) {
    rank_ = Rank(comm);
    size_ = Size(comm);
    left_ = (rank_ + size_ - 1) % size_;
    right_ = (rank_ + 1) % size_;
  }
  MPI_Comm comm() const { return comm_; }
  int cells() const { return kN + 2; }
  std::vector<int> neighbours() const { return {left_, right_}; }
  void Init(int64_t* c) const {
    for (int i = 0; i < kN; ++i) c[1 + i] = Seed(rank_ * kN + i);
    c[0] = c[kN + 1] = -1;
  }
  void Exchange(MPI_Win win, bool use_gets) const {
    // Window displacements are in cells (disp_unit 8).
    if (use_gets) {
      EXPECT_EQ(
          MPI_Get(&ghost_[0], 1, MPI_INT64_T, left_, kN, 1, MPI_INT64_T, win),
          MPI_SUCCESS);
      EXPECT_EQ(
          MPI_Get(&ghost_[1], 1, MPI_INT64_T, right_, 1, 1, MPI_INT64_T, win),
          MPI_SUCCESS);
    } else {
      EXPECT_EQ(MPI_Put(&local_[1], 1, MPI_INT64_T, left_, kN + 1, 1,
                        MPI_INT64_T, win),
                MPI_SUCCESS);
      EXPECT_EQ(
          MPI_Put(&local_[kN], 1, MPI_INT64_T, right_, 0, 1, MPI_INT64_T, win),
          MPI_SUCCESS);
    }
  }
  // Gets land in ghost_ (origin buffers outside the window), so Step copies
  // them in; puts land in the window's ghost cells directly.
  void Step(int64_t* c, int step) const {
    if (step % 2 == 1) {
      c[0] = ghost_[0];
      c[kN + 1] = ghost_[1];
    }
    std::vector<int64_t> next(kN);
    for (int i = 1; i <= kN; ++i) {
      next[i - 1] = (c[i - 1] + 2 * c[i] + 3 * c[i + 1] + step) % kMod;
    }
    std::copy(next.begin(), next.end(), c + 1);
  }
  std::vector<int64_t> Reference(int steps) const {
    const int n = size_ * kN;
    std::vector<int64_t> g(n), next(n);
    for (int i = 0; i < n; ++i) g[i] = Seed(i);
    for (int s = 0; s < steps; ++s) {
      for (int i = 0; i < n; ++i) {
        next[i] =
            (g[(i + n - 1) % n] + 2 * g[i] + 3 * g[(i + 1) % n] + s) % kMod;
      }
      g.swap(next);
    }
    return {g.begin() + rank_ * kN, g.begin() + (rank_ + 1) * kN};
  }
  std::vector<int64_t> Owned(const int64_t* c) const {
    return {c + 1, c + 1 + kN};
  }
  // The window's memory, for Exchange's puts (set by the runner).
  void Bind(int64_t* cells) { local_ = cells; }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1, left_ = 0, right_ = 0;
  int64_t* local_ = nullptr;
  mutable int64_t ghost_[2] = {-1, -1};
};

// 2D periodic grid over MPI_Cart_create: each rank owns kRows x kCols
// cells, stored row-major with a one-cell halo; columns move through a
// vector datatype.
class Grid {
 public:
  static constexpr int kRows = 4, kCols = 5;
  static constexpr int kW = kCols + 2;  // row stride with halo
  explicit Grid(MPI_Comm world) {
    const int size = Size(world);
    MPI_Dims_create(size, 2, dims_);
    const int periods[2] = {1, 1};
    MPI_Cart_create(world, 2, dims_, periods, 0, &cart_);
    rank_ = Rank(cart_);
    MPI_Cart_coords(cart_, rank_, 2, coords_);
    MPI_Cart_shift(cart_, 0, 1, &up_, &down_);
    MPI_Cart_shift(cart_, 1, 1, &left_, &right_);
    MPI_Type_vector(kRows, 1, kW, MPI_INT64_T, &column_);
    MPI_Type_commit(&column_);
  }
  ~Grid() {
    MPI_Type_free(&column_);
    MPI_Comm_free(&cart_);
  }
  MPI_Comm comm() const { return cart_; }
  int cells() const { return (kRows + 2) * kW; }
  std::vector<int> neighbours() const { return {up_, down_, left_, right_}; }
  static int At(int row, int col) { return row * kW + col; }
  void Init(int64_t* c) const {
    std::fill(c, c + cells(), -1);
    for (int r = 0; r < kRows; ++r) {
      for (int k = 0; k < kCols; ++k) c[At(r + 1, k + 1)] = Seed(Global(r, k));
    }
  }
  void Exchange(MPI_Win win, bool use_gets) const {
    if (use_gets) {
      // Pull each neighbour's facing edge into the halo, kept in gets_ (an
      // origin buffer shaped like the window).
      Get(win, up_, At(kRows, 1), At(0, 1), false);
      Get(win, down_, At(1, 1), At(kRows + 1, 1), false);
      Get(win, left_, At(1, kCols), At(1, 0), true);
      Get(win, right_, At(1, 1), At(1, kCols + 1), true);
    } else {
      Put(win, up_, At(1, 1), At(kRows + 1, 1), false);
      Put(win, down_, At(kRows, 1), At(0, 1), false);
      Put(win, left_, At(1, 1), At(1, kCols + 1), true);
      Put(win, right_, At(1, kCols), At(1, 0), true);
    }
  }
  void Step(int64_t* c, int step) const {
    if (step % 2 == 1) {  // gets landed in gets_: copy the halo in
      for (int k = 1; k <= kCols; ++k) {
        c[At(0, k)] = gets_[At(0, k)];
        c[At(kRows + 1, k)] = gets_[At(kRows + 1, k)];
      }
      for (int r = 1; r <= kRows; ++r) {
        c[At(r, 0)] = gets_[At(r, 0)];
        c[At(r, kCols + 1)] = gets_[At(r, kCols + 1)];
      }
    }
    std::vector<int64_t> next(cells());
    for (int r = 1; r <= kRows; ++r) {
      for (int k = 1; k <= kCols; ++k) {
        next[At(r, k)] = Stencil(c[At(r, k)], c[At(r - 1, k)], c[At(r + 1, k)],
                                 c[At(r, k - 1)], c[At(r, k + 1)], step);
      }
    }
    for (int r = 1; r <= kRows; ++r) {
      for (int k = 1; k <= kCols; ++k) c[At(r, k)] = next[At(r, k)];
    }
  }
  std::vector<int64_t> Reference(int steps) const {
    const int rows = dims_[0] * kRows, cols = dims_[1] * kCols;
    std::vector<int64_t> g(rows * cols), next(rows * cols);
    auto at = [&](int r, int k) {
      return ((r + rows) % rows) * cols + (k + cols) % cols;
    };
    for (int r = 0; r < rows; ++r) {
      for (int k = 0; k < cols; ++k) g[at(r, k)] = Seed(at(r, k));
    }
    for (int s = 0; s < steps; ++s) {
      for (int r = 0; r < rows; ++r) {
        for (int k = 0; k < cols; ++k) {
          next[at(r, k)] =
              Stencil(g[at(r, k)], g[at(r - 1, k)], g[at(r + 1, k)],
                      g[at(r, k - 1)], g[at(r, k + 1)], s);
        }
      }
      g.swap(next);
    }
    std::vector<int64_t> mine;
    for (int r = 0; r < kRows; ++r) {
      for (int k = 0; k < kCols; ++k) {
        mine.push_back(g[at(coords_[0] * kRows + r, coords_[1] * kCols + k)]);
      }
    }
    return mine;
  }
  std::vector<int64_t> Owned(const int64_t* c) const {
    std::vector<int64_t> mine;
    for (int r = 1; r <= kRows; ++r) {
      for (int k = 1; k <= kCols; ++k) mine.push_back(c[At(r, k)]);
    }
    return mine;
  }
  void Bind(int64_t* cells) {
    local_ = cells;
    gets_.assign(this->cells(), -1);
  }

 private:
  static int64_t Stencil(int64_t c, int64_t n, int64_t s, int64_t w, int64_t e,
                         int step) {
    return (3 * c + n + 2 * s + 5 * w + 7 * e + step) % kMod;
  }
  int Global(int r, int k) const {
    return (coords_[0] * kRows + r) * (dims_[1] * kCols) + coords_[1] * kCols +
           k;
  }
  void Put(MPI_Win win, int to, int from_cell, int to_cell, bool column) const {
    EXPECT_EQ(column ? MPI_Put(local_ + from_cell, 1, column_, to, to_cell, 1,
                               column_, win)
                     : MPI_Put(local_ + from_cell, kCols, MPI_INT64_T, to,
                               to_cell, kCols, MPI_INT64_T, win),
              MPI_SUCCESS);
  }
  void Get(MPI_Win win, int from, int from_cell, int to_cell,
           bool column) const {
    int64_t* dst = gets_.data() + to_cell;
    EXPECT_EQ(column
                  ? MPI_Get(dst, 1, column_, from, from_cell, 1, column_, win)
                  : MPI_Get(dst, kCols, MPI_INT64_T, from, from_cell, kCols,
                            MPI_INT64_T, win),
              MPI_SUCCESS);
  }

  int dims_[2] = {0, 0}, coords_[2] = {0, 0};
  MPI_Comm cart_ = MPI_COMM_NULL;
  int rank_ = 0, up_ = 0, down_ = 0, left_ = 0, right_ = 0;
  MPI_Datatype column_ = MPI_DATATYPE_NULL;
  int64_t* local_ = nullptr;
  mutable std::vector<int64_t> gets_;
};

// Runs `steps` halo exchanges on `domain` with `sync` and checks the owned
// cells against the serial reference after every few steps and at the end.
template <typename D>
void RunHalo(D& domain, Sync sync, int steps) {
  MPI_Comm comm = domain.comm();
  AllocWindow w(domain.cells() * sizeof(int64_t), sizeof(int64_t),
                MPI_INFO_NULL, comm);
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  EXPECT_TRUE(IsManaged(w.win()));
  int64_t* cells = w.base<int64_t>();
  domain.Bind(cells);
  domain.Init(cells);
  Group neighbours(comm, domain.neighbours());
  MPI_Barrier(comm);
  if (sync == Sync::kFence) MPI_Win_fence(0, w.win());
  for (int step = 0; step < steps; ++step) {
    const bool use_gets = step % 2 == 1;
    switch (sync) {
      case Sync::kFence:
        domain.Exchange(w.win(), use_gets);
        ASSERT_EQ(MPI_Win_fence(0, w.win()), MPI_SUCCESS);
        domain.Step(cells, step);
        // Nobody may read or write this rank's cells until all computed.
        ASSERT_EQ(MPI_Win_fence(0, w.win()), MPI_SUCCESS);
        break;
      case Sync::kFenceAsserts:
        // The compute phase issues no RMA and makes local stores; the
        // exchange phase makes no local stores, and gets put nothing.
        ASSERT_EQ(
            MPI_Win_fence(MPI_MODE_NOPRECEDE | (use_gets ? MPI_MODE_NOPUT : 0),
                          w.win()),
            MPI_SUCCESS);
        domain.Exchange(w.win(), use_gets);
        ASSERT_EQ(MPI_Win_fence(
                      MPI_MODE_NOSUCCEED | (use_gets ? 0 : MPI_MODE_NOSTORE),
                      w.win()),
                  MPI_SUCCESS);
        domain.Step(cells, step);
        break;
      case Sync::kPscw:
      case Sync::kPscwNoCheck: {
        const int assert = sync == Sync::kPscwNoCheck ? MPI_MODE_NOCHECK : 0;
        ASSERT_EQ(MPI_Win_post(neighbours.get(), assert, w.win()), MPI_SUCCESS);
        // NOCHECK promises every post precedes the matching starts.
        if (assert) MPI_Barrier(comm);
        ASSERT_EQ(MPI_Win_start(neighbours.get(), assert, w.win()),
                  MPI_SUCCESS);
        domain.Exchange(w.win(), use_gets);
        ASSERT_EQ(MPI_Win_complete(w.win()), MPI_SUCCESS);
        ASSERT_EQ(MPI_Win_wait(w.win()), MPI_SUCCESS);
        domain.Step(cells, step);
        break;
      }
    }
    if (step % 8 == 7) {
      ASSERT_EQ(domain.Owned(cells), domain.Reference(step + 1))
          << SyncName(sync) << " after step " << step;
    }
  }
  if (sync == Sync::kFence) MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win());
  EXPECT_EQ(domain.Owned(cells), domain.Reference(steps)) << SyncName(sync);
  MPI_Barrier(comm);
}

class RingHaloTest : public testing::TestWithParam<Sync> {};
class GridHaloTest : public testing::TestWithParam<Sync> {};

TEST_P(RingHaloTest, MatchesSerialReference) {
  Ring ring(MPI_COMM_WORLD);
  RunHalo(ring, GetParam(), Iterations(24, 12));
}

TEST_P(GridHaloTest, MatchesSerialReference) {
  Grid grid(MPI_COMM_WORLD);
  RunHalo(grid, GetParam(), Iterations(16, 8));
}

std::string SyncParamName(const testing::TestParamInfo<Sync>& info) {
  return SyncName(info.param);
}

INSTANTIATE_TEST_SUITE_P(Syncs, RingHaloTest,
                         testing::Values(Sync::kFence, Sync::kFenceAsserts,
                                         Sync::kPscw, Sync::kPscwNoCheck),
                         SyncParamName);
// The assertion variants add nothing topology-specific: plain fence and
// PSCW suffice on the grid.
INSTANTIATE_TEST_SUITE_P(Syncs, GridHaloTest,
                         testing::Values(Sync::kFence, Sync::kPscw),
                         SyncParamName);

}  // namespace
}  // namespace rmashim_test::active_target
