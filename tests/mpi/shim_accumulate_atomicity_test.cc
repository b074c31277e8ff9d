// Atomicity of the accumulate family on managed windows under contention:
// no fetch_and_op update is lost, a compare-and-swap spin lock excludes, no
// MPI_NO_OP read sees a mix of two writes at any element width, concurrent
// wide sums add up exactly; and the accumulate_ordering / accumulate_ops
// info keys that relax what MPI promises about ordering are accepted and
// honoured.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tests/mpi/shim_accumulate_util.h"
#include "tests/mpi_test_util.h"

namespace rmashim_test::accumulate {
namespace {

constexpr double kTimeoutSeconds = 5.0;

// ---- Atomicity under contention.

bool SingleNode() { return AllOnOneNode(MPI_COMM_WORLD); }

// MPICH's own atomics are slow when ranks are oversubscribed and split over
// (simulated) nodes, where the shim passes the family to MPI.
int Rounds(int single_node, int split) {
  return SingleNode() ? single_node : split;
}

// One managed window for the contention tests (each lays its own struct
// over it): window creation dominates their run time otherwise.
class ContentionTest : public testing::Test {
 protected:
  static constexpr MPI_Aint kBytes = 4096;
  static void SetUpTestSuite() { window_ = new AllocWindow(kBytes, 1); }
  static void TearDownTestSuite() {
    delete window_;
    window_ = nullptr;
  }
  void SetUp() override {
    ASSERT_EQ(window_->rc(), MPI_SUCCESS);
    EXPECT_TRUE(IsManaged(window_->win()));
    MPI_Barrier(MPI_COMM_WORLD);  // the previous test has checked its data
  }
  template <typename T>
  static T* Mem() {
    static_assert(sizeof(T) <= kBytes);
    return window_->base<T>();
  }
  static MPI_Win Win() { return window_->win(); }
  static AllocWindow* window_;
};
AllocWindow* ContentionTest::window_ = nullptr;

// Every rank takes tickets from counters of four widths and kinds (int64,
// int32, uint16 with fetch-add; double through a CAS loop) at two targets;
// the fetched values of all ranks together are exactly 0 .. total-1.
TEST_F(ContentionTest, ContendedFetchAndOpLosesNoUpdate) {
  struct Counters {
    int64_t i64;
    int32_t i32;
    uint16_t u16;
    double f64;
  };
  const int rank = Rank(), size = Size();
  const int rounds = Rounds(200, 10);
  *Mem<Counters>() = Counters{0, 0, 0, 0.0};
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<int> targets = {0};
  if (size > 1) targets.push_back(size - 1);
  // fetched[k][kind]: the values this rank got from targets[k].
  std::vector<std::vector<std::vector<int64_t>>> fetched(
      targets.size(), std::vector<std::vector<int64_t>>(4));
  ASSERT_EQ(MPI_Win_lock_all(0, Win()), MPI_SUCCESS);
  for (int i = 0; i < rounds; ++i) {
    for (size_t k = 0; k < targets.size(); ++k) {
      const int t = targets[k];
      const int64_t one64 = 1;
      const int32_t one32 = 1;
      const uint16_t one16 = 1;
      const double oned = 1.0;
      Counters old{-1, -1, 0xffff, -1.0};
      EXPECT_EQ(MPI_Fetch_and_op(&one64, &old.i64, MPI_INT64_T, t,
                                 offsetof(Counters, i64), MPI_SUM, Win()),
                MPI_SUCCESS);
      EXPECT_EQ(MPI_Fetch_and_op(&one32, &old.i32, MPI_INT32_T, t,
                                 offsetof(Counters, i32), MPI_SUM, Win()),
                MPI_SUCCESS);
      EXPECT_EQ(MPI_Fetch_and_op(&one16, &old.u16, MPI_UINT16_T, t,
                                 offsetof(Counters, u16), MPI_SUM, Win()),
                MPI_SUCCESS);
      EXPECT_EQ(MPI_Fetch_and_op(&oned, &old.f64, MPI_DOUBLE, t,
                                 offsetof(Counters, f64), MPI_SUM, Win()),
                MPI_SUCCESS);
      ASSERT_EQ(MPI_Win_flush(t, Win()), MPI_SUCCESS);
      fetched[k][0].push_back(old.i64);
      fetched[k][1].push_back(old.i32);
      fetched[k][2].push_back(old.u16);
      fetched[k][3].push_back(static_cast<int64_t>(old.f64));
    }
  }
  ASSERT_EQ(MPI_Win_unlock_all(Win()), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  const char* kinds[] = {"int64", "int32", "uint16", "double"};
  for (size_t k = 0; k < targets.size(); ++k) {
    for (int kind = 0; kind < 4; ++kind) {
      std::vector<int64_t> all(static_cast<size_t>(rounds) * size);
      MPI_Allgather(fetched[k][kind].data(), rounds, MPI_INT64_T, all.data(),
                    rounds, MPI_INT64_T, MPI_COMM_WORLD);
      std::sort(all.begin(), all.end());
      for (size_t i = 0; i < all.size(); ++i) {
        ASSERT_EQ(all[i], static_cast<int64_t>(i))
            << kinds[kind] << " at " << targets[k]
            << ": lost or repeated ticket";
      }
    }
    if (rank == targets[k]) {
      const Counters& c = *Mem<Counters>();
      const int64_t total = int64_t{rounds} * size;
      EXPECT_EQ(c.i64, total);
      EXPECT_EQ(c.i32, total);
      EXPECT_EQ(c.u16, total);
      EXPECT_EQ(c.f64, static_cast<double>(total));
    }
  }
}

// A spin lock made of MPI_Compare_and_swap protects a counter updated with
// plain get and put. Holding the lock, the owner's mark must stay in place;
// the counter ends at the number of critical sections.
TEST_F(ContentionTest, CompareAndSwapSpinLockProtectsPlainCounter) {
  const int rank = Rank(), size = Size();
  const int rounds = Rounds(40, 3);
  const int home = size - 1;
  struct Cells {
    int64_t lock;  // 0 free, else holder + 1
    int64_t counter;
  };
  constexpr MPI_Aint kLock = offsetof(Cells, lock);
  constexpr MPI_Aint kCounter = offsetof(Cells, counter);
  *Mem<Cells>() = Cells{0, 0};
  MPI_Barrier(MPI_COMM_WORLD);
  const int64_t me = rank + 1, free_word = 0;
  int violations = 0;
  ASSERT_EQ(MPI_Win_lock_all(0, Win()), MPI_SUCCESS);
  for (int i = 0; i < rounds; ++i) {
    const bool acquired = PollUntil(
        [&] {
          int64_t old = -1;
          MPI_Compare_and_swap(&me, &free_word, &old, MPI_INT64_T, home, kLock,
                               Win());
          MPI_Win_flush(home, Win());
          return old == 0;
        },
        kTimeoutSeconds);
    ASSERT_TRUE(acquired) << "spin lock never became free";
    int64_t counter = -1;
    MPI_Get(&counter, 1, MPI_INT64_T, home, kCounter, 1, MPI_INT64_T, Win());
    MPI_Win_flush(home, Win());
    ++counter;
    MPI_Put(&counter, 1, MPI_INT64_T, home, kCounter, 1, MPI_INT64_T, Win());
    MPI_Win_flush(home, Win());
    // Release by swapping our mark back out: anything else there means
    // someone entered while we held the lock.
    int64_t held = -1;
    MPI_Compare_and_swap(&free_word, &me, &held, MPI_INT64_T, home, kLock,
                         Win());
    MPI_Win_flush(home, Win());
    if (held != me) ++violations;
  }
  ASSERT_EQ(MPI_Win_unlock_all(Win()), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(violations, 0);
  if (rank == home) {
    EXPECT_EQ(Mem<Cells>()->lock, 0);
    EXPECT_EQ(Mem<Cells>()->counter, int64_t{rounds} * size);
  }
}

struct LongDoubleInt {
  long double value;
  int index;
};

// Writers replace whole elements (every field carries the writer's stamp)
// while readers read them with MPI_Get_accumulate(MPI_NO_OP) and
// MPI_Fetch_and_op(MPI_NO_OP): no read may see a mix of two writes. One
// machine word (CPU atomics), complex double (16 bytes) and long double int
// pairs (striped locks in the shim).
TEST_F(ContentionTest, NoOpReadsAreAtomicForEveryWidth) {
  using Cplx = Complex<double>::V;
  constexpr int kN = 4;
  struct Cells {
    int64_t word[kN];
    Cplx cplx[kN];
    LongDoubleInt pair[kN];
  };
  const int rank = Rank();
  const int rounds = Rounds(300, 8);
  const int home = 0;
  auto pair_of = [](int64_t s) {
    LongDoubleInt e;
    std::memset(&e, 0, sizeof e);
    e.value = static_cast<long double>(s);
    e.index = static_cast<int>(s);
    return e;
  };
  Cells* cells = Mem<Cells>();
  for (int i = 0; i < kN; ++i) {
    cells->word[i] = 0;
    cells->cplx[i] = {0.0, 0.0};
    cells->pair[i] = pair_of(0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int torn = 0;
  ASSERT_EQ(MPI_Win_lock_all(0, Win()), MPI_SUCCESS);
  for (int i = 0; i < rounds; ++i) {
    const int64_t s = int64_t{rank + 1} * 100000 + i;
    std::vector<int64_t> words(kN, s);
    std::vector<Cplx> cplx(
        kN, Cplx{static_cast<double>(s), static_cast<double>(s)});
    std::vector<LongDoubleInt> pairs(kN, pair_of(s));
    EXPECT_EQ(MPI_Accumulate(words.data(), kN, MPI_INT64_T, home,
                             offsetof(Cells, word), kN, MPI_INT64_T,
                             MPI_REPLACE, Win()),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Accumulate(cplx.data(), kN, MPI_C_DOUBLE_COMPLEX, home,
                             offsetof(Cells, cplx), kN, MPI_C_DOUBLE_COMPLEX,
                             MPI_REPLACE, Win()),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Accumulate(pairs.data(), kN, MPI_LONG_DOUBLE_INT, home,
                             offsetof(Cells, pair), kN, MPI_LONG_DOUBLE_INT,
                             MPI_REPLACE, Win()),
              MPI_SUCCESS);
    Cells seen;
    Cplx one_cplx{-1.0, -2.0};
    LongDoubleInt one_pair = pair_of(-1);
    one_pair.index = -2;
    EXPECT_EQ(
        MPI_Get_accumulate(cplx.data(), kN, MPI_C_DOUBLE_COMPLEX, seen.cplx, kN,
                           MPI_C_DOUBLE_COMPLEX, home, offsetof(Cells, cplx),
                           kN, MPI_C_DOUBLE_COMPLEX, MPI_NO_OP, Win()),
        MPI_SUCCESS);
    EXPECT_EQ(
        MPI_Get_accumulate(pairs.data(), kN, MPI_LONG_DOUBLE_INT, seen.pair, kN,
                           MPI_LONG_DOUBLE_INT, home, offsetof(Cells, pair), kN,
                           MPI_LONG_DOUBLE_INT, MPI_NO_OP, Win()),
        MPI_SUCCESS);
    const MPI_Aint j = i % kN;
    EXPECT_EQ(MPI_Fetch_and_op(cplx.data(), &one_cplx, MPI_C_DOUBLE_COMPLEX,
                               home, offsetof(Cells, cplx) + j * sizeof(Cplx),
                               MPI_NO_OP, Win()),
              MPI_SUCCESS);
    EXPECT_EQ(
        MPI_Fetch_and_op(pairs.data(), &one_pair, MPI_LONG_DOUBLE_INT, home,
                         offsetof(Cells, pair) + j * sizeof(LongDoubleInt),
                         MPI_NO_OP, Win()),
        MPI_SUCCESS);
    EXPECT_EQ(MPI_Win_flush(home, Win()), MPI_SUCCESS);
    for (int k = 0; k < kN; ++k) {
      torn += seen.cplx[k].re != seen.cplx[k].im;
      torn += seen.pair[k].value != seen.pair[k].index;
    }
    torn += one_cplx.re != one_cplx.im;
    torn += one_pair.value != one_pair.index;
  }
  ASSERT_EQ(MPI_Win_unlock_all(Win()), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(torn, 0) << "reads saw mixed writes";
  if (rank == home) {
    // The last write to each element is some origin's last round.
    for (int k = 0; k < kN; ++k) {
      EXPECT_EQ(cells->word[k] % 100000, rounds - 1) << k;
      EXPECT_EQ(cells->cplx[k].re, cells->cplx[k].im) << k;
      EXPECT_EQ(static_cast<int64_t>(cells->cplx[k].re) % 100000, rounds - 1)
          << k;
      EXPECT_EQ(cells->pair[k].value, cells->pair[k].index) << k;
      EXPECT_EQ(cells->pair[k].index % 100000, rounds - 1) << k;
    }
  }
}

// Concurrent MPI_SUM on wide elements (striped locks in the shim) and on
// doubles (CAS loops) from every rank add up exactly.
TEST_F(ContentionTest, ConcurrentWideSumsAddUp) {
  const int rank = Rank(), size = Size();
  const int rounds = Rounds(200, 6);
  constexpr int kN = 8;
  struct Cells {
    Complex<long double>::V wide[kN];
    double narrow[kN];
  };
  auto* cells = Mem<Cells>();
  for (int i = 0; i < kN; ++i) {
    cells->wide[i] = {0.0L, 0.0L};
    cells->narrow[i] = 0.0;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const int home = size / 2;
  std::vector<Complex<long double>::V> add(kN);
  std::vector<double> addd(kN);
  for (int i = 0; i < kN; ++i) {
    add[i] = {static_cast<long double>(rank + 1),
              static_cast<long double>(i + 1)};
    addd[i] = rank + 1 + i;
  }
  ASSERT_EQ(MPI_Win_lock_all(0, Win()), MPI_SUCCESS);
  for (int r = 0; r < rounds; ++r) {
    EXPECT_EQ(MPI_Accumulate(add.data(), kN, MPI_C_LONG_DOUBLE_COMPLEX, home,
                             offsetof(Cells, wide), kN,
                             MPI_C_LONG_DOUBLE_COMPLEX, MPI_SUM, Win()),
              MPI_SUCCESS);
    EXPECT_EQ(
        MPI_Accumulate(addd.data(), kN, MPI_DOUBLE, home,
                       offsetof(Cells, narrow), kN, MPI_DOUBLE, MPI_SUM, Win()),
        MPI_SUCCESS);
  }
  ASSERT_EQ(MPI_Win_unlock_all(Win()), MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == home) {
    const long double ranks_sum = size * (size + 1) / 2;
    for (int i = 0; i < kN; ++i) {
      EXPECT_EQ(cells->wide[i].re, rounds * ranks_sum) << i;
      EXPECT_EQ(cells->wide[i].im,
                static_cast<long double>(rounds) * size * (i + 1))
          << i;
      EXPECT_EQ(cells->narrow[i],
                rounds * (static_cast<double>(ranks_sum) + size * i))
          << i;
    }
  }
}

// ---- Info keys.

// accumulate_ordering and accumulate_ops are accepted, reported back as on
// a native window, and accumulates honouring them work.
TEST(AccumulateTest, AccumulateInfoKeysAccepted) {
  const int rank = Rank(), size = Size();
  const std::pair<const char*, const char*> settings[][2] = {
      {{"accumulate_ordering", "none"}, {"accumulate_ops", "same_op_no_op"}},
  };
  for (const auto& kv : settings) {
    ScopedInfo info({kv[0], kv[1]});
    ScopedInfo native_info({kv[0], kv[1], {"rmashim_managed", "false"}});
    const MPI_Aint bytes = NativeSafeBytes(2 * sizeof(int64_t));
    AllocWindow managed(bytes, sizeof(int64_t), info.get());
    AllocWindow native(bytes, sizeof(int64_t), native_info.get());
    ASSERT_EQ(managed.rc(), MPI_SUCCESS) << kv[0].second;
    ASSERT_EQ(native.rc(), MPI_SUCCESS) << kv[0].second;
    EXPECT_TRUE(IsManaged(managed.win()));
    // Reported back as native MPICH reports them.
    for (const auto& [key, value] : kv) {
      std::string reported[2];
      int flags[2] = {0, 0};
      for (int k = 0; k < 2; ++k) {
        MPI_Info got;
        ASSERT_EQ(MPI_Win_get_info((k ? native : managed).win(), &got),
                  MPI_SUCCESS);
        char buf[MPI_MAX_INFO_VAL + 1] = {};
        MPI_Info_get(got, key, MPI_MAX_INFO_VAL, buf, &flags[k]);
        reported[k] = buf;
        MPI_Info_free(&got);
      }
      EXPECT_EQ(flags[0], flags[1]) << key << "=" << value;
      EXPECT_EQ(reported[0], reported[1]) << key << "=" << value;
    }
    for (const AllocWindow* w : {&managed, &native}) {
      w->base<int64_t>()[0] = w->base<int64_t>()[1] = 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t before[2] = {-1, -1};
    for (const AllocWindow* w : {&managed, &native}) {
      const int64_t add = rank + 1;
      int64_t* seen = &before[w == &native];
      ASSERT_EQ(MPI_Win_lock_all(0, w->win()), MPI_SUCCESS);
      for (int t = 0; t < size; ++t) {
        EXPECT_EQ(MPI_Accumulate(&add, 1, MPI_INT64_T, t, 0, 1, MPI_INT64_T,
                                 MPI_SUM, w->win()),
                  MPI_SUCCESS);
        // Without ordering guarantees only a flush orders the read.
        MPI_Win_flush(t, w->win());
        int64_t got = -1;
        EXPECT_EQ(
            MPI_Fetch_and_op(&add, &got, MPI_INT64_T, t, 1, MPI_SUM, w->win()),
            MPI_SUCCESS);
        MPI_Win_flush(t, w->win());
        if (t == rank) *seen = got;
      }
      ASSERT_EQ(MPI_Win_unlock_all(w->win()), MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const int64_t total = int64_t{size} * (size + 1) / 2;
    for (const AllocWindow* w : {&managed, &native}) {
      EXPECT_EQ(w->base<int64_t>()[0], total) << kv[0].second;
      EXPECT_EQ(w->base<int64_t>()[1], total) << kv[0].second;
    }
    EXPECT_GE(before[0], 0);
    EXPECT_LE(before[0], total - (rank + 1));
  }
}

}  // namespace
}  // namespace rmashim_test::accumulate
