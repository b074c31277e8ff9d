// Call shapes the MPI standard allows that real programs use and the shim
// once got wrong: MPI_BOTTOM with absolute-address datatypes (ARMCI-MPI's
// vector operations), MPI_PROC_NULL in and outside epochs (request-based
// operations included), and zero counts and zero-size datatypes, on every
// managed flavor, zero-byte windows included.
//
// The same binary runs natively (tests/mpi/BUILD: *_native targets) and under
// the shim, so every expectation here is what MPICH itself does; under the
// shim (RMASHIM_EXPECT_MANAGED=1) each window must also be managed, or the
// test would compare native with native.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "tests/mpi_test_util.h"

namespace {

using rmashim_test::IsManaged;
using rmashim_test::Rank;
using rmashim_test::ScopedComm;
using rmashim_test::Size;

enum class Flavor { kAllocate, kCreate, kShared };

const char* FlavorName(Flavor f) {
  switch (f) {
    case Flavor::kAllocate:
      return "allocate";
    case Flavor::kCreate:
      return "create";
    case Flavor::kShared:
      return "shared";
  }
  return "?";
}

bool ShimExpected() {
  const char* v = std::getenv("RMASHIM_EXPECT_MANAGED");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

// A window of `bytes` on every rank of `comm` (the node communicator for
// the shared flavor), of the flavor asked for, with MPI_ERRORS_RETURN,
// zeroed on every rank before the constructor returns.
class TestWindow {
 public:
  TestWindow(Flavor flavor, MPI_Aint bytes, MPI_Comm comm) {
    if (flavor == Flavor::kCreate) {
      memory_.resize(static_cast<size_t>(bytes));
      rc_ = MPI_Win_create(bytes ? memory_.data() : nullptr, bytes, 1,
                           MPI_INFO_NULL, comm, &win_);
      base_ = memory_.data();
    } else if (flavor == Flavor::kAllocate) {
      rc_ = MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, comm, &base_, &win_);
    } else {
      rc_ =
          MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, comm, &base_, &win_);
    }
    if (rc_ == MPI_SUCCESS) {
      MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
      if (bytes > 0) std::memset(base_, 0, static_cast<size_t>(bytes));
    }
    MPI_Barrier(comm);  // zeroed everywhere before any peer writes
  }
  ~TestWindow() {
    if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);
  }
  TestWindow(const TestWindow&) = delete;
  TestWindow& operator=(const TestWindow&) = delete;

  int rc() const { return rc_; }
  MPI_Win win() const { return win_; }
  template <typename T>
  T* base() const {
    return static_cast<T*>(base_);
  }

 private:
  std::vector<std::byte> memory_;
  void* base_ = nullptr;
  MPI_Win win_ = MPI_WIN_NULL;
  int rc_ = MPI_ERR_OTHER;
};

// Under the shim the window is managed; natively it is not.
void ExpectServedByShim(const TestWindow& w) {
  EXPECT_EQ(IsManaged(w.win()), ShimExpected());
}

// The communicator a flavor's windows span: the whole world, or the node
// for MPI_Win_allocate_shared.
MPI_Comm FlavorComm(Flavor f) {
  MPI_Comm comm;
  if (f == Flavor::kShared) {
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                        &comm);
  } else {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  }
  return comm;
}

class ScopedType {
 public:
  explicit ScopedType(MPI_Datatype t) : type_(t) { MPI_Type_commit(&type_); }
  ~ScopedType() { MPI_Type_free(&type_); }
  ScopedType(const ScopedType&) = delete;
  ScopedType& operator=(const ScopedType&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_;
};

class CallShapesTest : public testing::TestWithParam<Flavor> {};

// ---- MPI_BOTTOM with absolute-address types.

// Three separately allocated origin blocks of doubles, described by one
// hindexed type of absolute addresses (as ARMCI-MPI builds for its vector
// calls), land at three target blocks described by an indexed type.
constexpr std::array<int, 3> kBlockLens = {3, 5, 2};
constexpr std::array<int, 3> kTargetDisps = {1, 10, 30};  // in doubles
constexpr int kWindowDoubles = 40;

struct Blocks {
  std::array<std::unique_ptr<double[]>, 3> data;
  MPI_Datatype absolute = MPI_DATATYPE_NULL;

  explicit Blocks(double first) {
    std::array<MPI_Aint, 3> addr{};
    double v = first;
    for (size_t b = 0; b < data.size(); ++b) {
      data[b] = std::make_unique<double[]>(kBlockLens[b]);
      for (int i = 0; i < kBlockLens[b]; ++i) data[b][i] = v++;
      MPI_Get_address(data[b].get(), &addr[b]);
    }
    MPI_Type_create_hindexed(3, kBlockLens.data(), addr.data(), MPI_DOUBLE,
                             &absolute);
    MPI_Type_commit(&absolute);
  }
  ~Blocks() { MPI_Type_free(&absolute); }
  double at(int k) const {  // k-th double in type-map order
    for (size_t b = 0; b < data.size(); ++b) {
      if (k < kBlockLens[b]) return data[b][k];
      k -= kBlockLens[b];
    }
    return -1;
  }
};

MPI_Datatype TargetBlocks() {
  MPI_Datatype t;
  MPI_Type_indexed(3, kBlockLens.data(), kTargetDisps.data(), MPI_DOUBLE, &t);
  return t;
}

// The window double that the k-th origin double lands on.
int TargetIndex(int k) {
  for (size_t b = 0; b < kBlockLens.size(); ++b) {
    if (k < kBlockLens[b]) return kTargetDisps[b] + k;
    k -= kBlockLens[b];
  }
  return -1;
}

constexpr int kBlockDoubles = 10;  // 3 + 5 + 2

TEST_P(CallShapesTest, MpiBottomWithAbsoluteAddressTypes) {
  ScopedComm comm(FlavorComm(GetParam()));
  const int me = Rank(comm.get()), n = Size(comm.get());
  const int target = (me + 1) % n, origin = (me + n - 1) % n;
  TestWindow w(GetParam(), kWindowDoubles * sizeof(double), comm.get());
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  ExpectServedByShim(w);
  ScopedType target_type(TargetBlocks());
  const double* mine = w.base<double>();
  auto in_window = [&](int k) { return mine[TargetIndex(k)]; };

  // Put, then accumulate (SUM) the same values again: the target holds 2x.
  Blocks put(100.0 * me + 1);
  MPI_Win_lock_all(0, w.win());
  ASSERT_EQ(MPI_Put(MPI_BOTTOM, 1, put.absolute, target, 0, 1,
                    target_type.get(), w.win()),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Win_flush(target, w.win()), MPI_SUCCESS);
  ASSERT_EQ(MPI_Accumulate(MPI_BOTTOM, 1, put.absolute, target, 0, 1,
                           target_type.get(), MPI_SUM, w.win()),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Win_flush(target, w.win()), MPI_SUCCESS);
  MPI_Win_unlock_all(w.win());
  MPI_Barrier(comm.get());
  MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w.win());  // see the window's memory
  for (int k = 0; k < kBlockDoubles; ++k) {
    EXPECT_EQ(in_window(k), 2 * (100.0 * origin + 1 + k)) << "double " << k;
  }
  EXPECT_EQ(mine[0], 0.0);  // between the blocks: untouched
  EXPECT_EQ(mine[kWindowDoubles - 1], 0.0);
  MPI_Win_unlock(me, w.win());
  MPI_Barrier(comm.get());

  // Get into absolute blocks; get_accumulate (SUM of 1s) fetching into
  // absolute blocks; then the request-based forms of all four.
  Blocks got(-1), fetched(-1), ones(1), rgot(-1), rfetched(-1);
  for (size_t b = 0; b < ones.data.size(); ++b) {
    std::fill(ones.data[b].get(), ones.data[b].get() + kBlockLens[b], 1.0);
  }
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, w.win());
  ASSERT_EQ(MPI_Get(MPI_BOTTOM, 1, got.absolute, target, 0, 1,
                    target_type.get(), w.win()),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Win_flush(target, w.win()), MPI_SUCCESS);
  ASSERT_EQ(MPI_Get_accumulate(MPI_BOTTOM, 1, ones.absolute, MPI_BOTTOM, 1,
                               fetched.absolute, target, 0, 1,
                               target_type.get(), MPI_SUM, w.win()),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Win_flush(target, w.win()), MPI_SUCCESS);
  MPI_Request rq[4];
  ASSERT_EQ(MPI_Rget(MPI_BOTTOM, 1, rgot.absolute, target, 0, 1,
                     target_type.get(), w.win(), &rq[0]),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&rq[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
  ASSERT_EQ(MPI_Rget_accumulate(MPI_BOTTOM, 1, ones.absolute, MPI_BOTTOM, 1,
                                rfetched.absolute, target, 0, 1,
                                target_type.get(), MPI_SUM, w.win(), &rq[1]),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&rq[1], MPI_STATUS_IGNORE), MPI_SUCCESS);
  Blocks rput(1000.0 * me);
  ASSERT_EQ(MPI_Rput(MPI_BOTTOM, 1, rput.absolute, target, 0, 1,
                     target_type.get(), w.win(), &rq[2]),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&rq[2], MPI_STATUS_IGNORE), MPI_SUCCESS);
  ASSERT_EQ(MPI_Raccumulate(MPI_BOTTOM, 1, rput.absolute, target, 0, 1,
                            target_type.get(), MPI_SUM, w.win(), &rq[3]),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&rq[3], MPI_STATUS_IGNORE), MPI_SUCCESS);
  MPI_Win_unlock(target, w.win());
  for (int k = 0; k < kBlockDoubles; ++k) {
    const double put_twice = 2 * (100.0 * me + 1 + k);  // what `target` held
    EXPECT_EQ(got.at(k), put_twice) << "get, double " << k;
    EXPECT_EQ(fetched.at(k), put_twice) << "get_accumulate, double " << k;
    EXPECT_EQ(rgot.at(k), put_twice + 1) << "rget, double " << k;
    EXPECT_EQ(rfetched.at(k), put_twice + 1) << "rget_accumulate, double " << k;
  }
  MPI_Barrier(comm.get());
  MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w.win());
  for (int k = 0; k < kBlockDoubles; ++k) {
    EXPECT_EQ(in_window(k), 2 * (1000.0 * origin + k))
        << "rput+raccumulate " << k;
  }
  MPI_Win_unlock(me, w.win());
  MPI_Barrier(comm.get());
}

// A struct of an int and a double at absolute addresses (mixed types: the
// shim cannot flatten it to one element type) moves as bytes both ways.
TEST_P(CallShapesTest, MpiBottomWithMixedStructType) {
  ScopedComm comm(FlavorComm(GetParam()));
  const int me = Rank(comm.get()), n = Size(comm.get());
  const int target = (me + 1) % n, origin = (me + n - 1) % n;
  TestWindow w(GetParam(), 64, comm.get());
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  ExpectServedByShim(w);
  auto i_out = std::make_unique<int>(7 + me);
  auto d_out = std::make_unique<double>(0.5 + me);
  auto i_in = std::make_unique<int>(-1);
  auto d_in = std::make_unique<double>(-1);
  auto make = [](int* i, double* d) {
    const int lens[2] = {1, 1};
    MPI_Aint addr[2];
    MPI_Get_address(i, &addr[0]);
    MPI_Get_address(d, &addr[1]);
    const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Datatype t;
    MPI_Type_create_struct(2, lens, addr, types, &t);
    return t;
  };
  ScopedType out(make(i_out.get(), d_out.get()));
  ScopedType in(make(i_in.get(), d_in.get()));
  // At the target: the int at byte 8, the double at byte 16.
  const int lens[2] = {1, 1};
  const MPI_Aint disps[2] = {8, 16};
  const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Datatype tt;
  MPI_Type_create_struct(2, lens, disps, types, &tt);
  ScopedType at_target(tt);
  MPI_Win_fence(0, w.win());
  ASSERT_EQ(
      MPI_Put(MPI_BOTTOM, 1, out.get(), target, 0, 1, at_target.get(), w.win()),
      MPI_SUCCESS);
  MPI_Win_fence(0, w.win());
  ASSERT_EQ(
      MPI_Get(MPI_BOTTOM, 1, in.get(), target, 0, 1, at_target.get(), w.win()),
      MPI_SUCCESS);
  MPI_Win_fence(0, w.win());
  EXPECT_EQ(*i_in, 7 + me);
  EXPECT_EQ(*d_in, 0.5 + me);
  int landed_i;
  double landed_d;
  std::memcpy(&landed_i, w.base<std::byte>() + 8, sizeof(int));
  std::memcpy(&landed_d, w.base<std::byte>() + 16, sizeof(double));
  EXPECT_EQ(landed_i, 7 + origin);
  EXPECT_EQ(landed_d, 0.5 + origin);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win());
}

// ---- MPI_PROC_NULL.

// Every data-movement call to MPI_PROC_NULL succeeds and moves nothing; a
// request-based one returns a request that completes, whatever the epoch
// (none, a lock on MPI_PROC_NULL, a lock on a real target, a fence).
TEST_P(CallShapesTest, ProcNullIsANoOpInEveryEpoch) {
  ScopedComm comm(FlavorComm(GetParam()));
  const int me = Rank(comm.get()), n = Size(comm.get());
  TestWindow w(GetParam(), 16 * sizeof(int), comm.get());
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  ExpectServedByShim(w);
  const int buf[4] = {1, 2, 3, 4};
  int res[4] = {9, 9, 9, 9};
  const int P = MPI_PROC_NULL;
  MPI_Win win = w.win();
  auto all_ops = [&](const char* epoch) {
    SCOPED_TRACE(epoch);
    EXPECT_EQ(MPI_Put(buf, 4, MPI_INT, P, 0, 4, MPI_INT, win), MPI_SUCCESS);
    EXPECT_EQ(MPI_Get(res, 4, MPI_INT, P, 0, 4, MPI_INT, win), MPI_SUCCESS);
    EXPECT_EQ(MPI_Accumulate(buf, 4, MPI_INT, P, 0, 4, MPI_INT, MPI_SUM, win),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Get_accumulate(buf, 4, MPI_INT, res, 4, MPI_INT, P, 0, 4,
                                 MPI_INT, MPI_SUM, win),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Fetch_and_op(buf, res, MPI_INT, P, 0, MPI_SUM, win),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Compare_and_swap(buf, buf + 1, res, MPI_INT, P, 0, win),
              MPI_SUCCESS);
    MPI_Request rq[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                         MPI_REQUEST_NULL};
    EXPECT_EQ(MPI_Rput(buf, 4, MPI_INT, P, 0, 4, MPI_INT, win, &rq[0]),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Rget(res, 4, MPI_INT, P, 0, 4, MPI_INT, win, &rq[1]),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Raccumulate(buf, 4, MPI_INT, P, 0, 4, MPI_INT, MPI_SUM, win,
                              &rq[2]),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Rget_accumulate(buf, 4, MPI_INT, res, 4, MPI_INT, P, 0, 4,
                                  MPI_INT, MPI_SUM, win, &rq[3]),
              MPI_SUCCESS);
    for (MPI_Request& r : rq) {
      EXPECT_NE(r, MPI_REQUEST_NULL);  // MPICH returns a real request
      int done = 0;
      for (int spin = 0; spin < 1000000 && !done; ++spin) {
        ASSERT_EQ(MPI_Test(&r, &done, MPI_STATUS_IGNORE), MPI_SUCCESS);
      }
      EXPECT_TRUE(done);
      EXPECT_EQ(r, MPI_REQUEST_NULL);
    }
    for (int v : res) EXPECT_EQ(v, 9);  // nothing was fetched
  };
  all_ops("no epoch");
  ASSERT_EQ(MPI_Win_lock(MPI_LOCK_SHARED, P, 0, win), MPI_SUCCESS);
  all_ops("lock on MPI_PROC_NULL");
  EXPECT_EQ(MPI_Win_flush(P, win), MPI_SUCCESS);
  EXPECT_EQ(MPI_Win_flush_local(P, win), MPI_SUCCESS);
  // A lock on MPI_PROC_NULL opens no epoch on a real target.
  if (n > 1) {
    int one = 1;
    EXPECT_EQ(rmashim_test::ErrorClass(
                  MPI_Put(&one, 1, MPI_INT, (me + 1) % n, 0, 1, MPI_INT, win)),
              MPI_ERR_RMA_SYNC);
  }
  ASSERT_EQ(MPI_Win_unlock(P, win), MPI_SUCCESS);
  ASSERT_EQ(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, (me + 1) % n, 0, win),
            MPI_SUCCESS);
  EXPECT_EQ(MPI_Win_lock(MPI_LOCK_SHARED, P, 0, win), MPI_SUCCESS);
  all_ops("lock on a real target");
  EXPECT_EQ(MPI_Win_unlock(P, win), MPI_SUCCESS);
  ASSERT_EQ(MPI_Win_unlock((me + 1) % n, win), MPI_SUCCESS);
  MPI_Win_fence(0, win);
  all_ops("fence");
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  // Nothing reached any window.
  MPI_Barrier(comm.get());
  for (int i = 0; i < 16; ++i) EXPECT_EQ(w.base<int>()[i], 0);
}

// ---- Zero counts and zero-size datatypes.

TEST_P(CallShapesTest, ZeroCountsAndZeroSizeTypesAreNoOps) {
  ScopedComm comm(FlavorComm(GetParam()));
  const int me = Rank(comm.get()), n = Size(comm.get());
  MPI_Datatype raw;
  MPI_Type_contiguous(0, MPI_INT, &raw);
  ScopedType zero(raw);
  MPI_Type_vector(3, 0, 2, MPI_DOUBLE, &raw);  // three empty blocks
  ScopedType empty_vector(raw);
  for (MPI_Aint bytes : {MPI_Aint{0}, MPI_Aint{64}}) {
    SCOPED_TRACE(bytes);
    // Zero bytes on every rank, or on odd ranks only.
    const MPI_Aint mine = bytes == 0 || me % 2 ? 0 : bytes;
    TestWindow w(GetParam(), mine, comm.get());
    ASSERT_EQ(w.rc(), MPI_SUCCESS);
    ExpectServedByShim(w);
    MPI_Win win = w.win();
    const int t = (me + 1) % n;
    const int buf[4] = {1, 2, 3, 4};
    int res[4] = {9, 9, 9, 9};
    MPI_Request rq;
    MPI_Win_lock_all(0, win);
    EXPECT_EQ(MPI_Put(buf, 1, zero.get(), t, 0, 1, zero.get(), win),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Put(buf, 2, empty_vector.get(), t, 0, 0, MPI_INT, win),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Put(buf, 0, MPI_INT, t, 0, 0, MPI_INT, win), MPI_SUCCESS);
    EXPECT_EQ(MPI_Get(res, 1, zero.get(), t, 0, 1, zero.get(), win),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Get(res, 0, MPI_INT, t, 0, 0, MPI_INT, win), MPI_SUCCESS);
    EXPECT_EQ(
        MPI_Accumulate(buf, 1, zero.get(), t, 0, 1, zero.get(), MPI_SUM, win),
        MPI_SUCCESS);
    EXPECT_EQ(MPI_Accumulate(buf, 0, MPI_INT, t, 0, 0, MPI_INT, MPI_SUM, win),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Get_accumulate(buf, 1, zero.get(), res, 1, zero.get(), t, 0,
                                 1, zero.get(), MPI_SUM, win),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Get_accumulate(nullptr, 0, MPI_INT, res, 0, MPI_INT, t, 0, 0,
                                 MPI_INT, MPI_NO_OP, win),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Rput(buf, 1, zero.get(), t, 0, 1, zero.get(), win, &rq),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(MPI_Rget(res, 0, MPI_INT, t, 0, 0, MPI_INT, win, &rq),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ASSERT_EQ(MPI_Raccumulate(buf, 1, zero.get(), t, 0, 1, zero.get(), MPI_SUM,
                              win, &rq),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(MPI_Win_flush_all(win), MPI_SUCCESS);
    MPI_Win_unlock_all(win);
    for (int v : res) EXPECT_EQ(v, 9);
    MPI_Barrier(comm.get());
    for (MPI_Aint i = 0; i < mine; ++i) {
      ASSERT_EQ(w.base<unsigned char>()[i], 0) << "byte " << i;
    }
  }
}

// ---- Epoch rules.

// MPI_Win_free inside an exposure epoch is refused (MPI_ERR_RMA_SYNC) and
// leaves the window working: the epoch then completes and the window frees.
TEST_P(CallShapesTest, FreeDuringExposureEpochIsRefused) {
  ScopedComm comm(FlavorComm(GetParam()));
  const int me = Rank(comm.get());
  TestWindow w(GetParam(), 16 * sizeof(int), comm.get());
  ASSERT_EQ(w.rc(), MPI_SUCCESS);
  ExpectServedByShim(w);
  MPI_Win win = w.win();
  MPI_Group group, self;
  MPI_Win_get_group(win, &group);
  MPI_Group_incl(group, 1, &me, &self);
  ASSERT_EQ(MPI_Win_post(self, 0, win), MPI_SUCCESS);
  EXPECT_EQ(rmashim_test::ErrorClass(MPI_Win_free(&win)), MPI_ERR_RMA_SYNC);
  ASSERT_EQ(win, w.win());  // still the window
  EXPECT_EQ(rmashim_test::ErrorClass(MPI_Win_fence(0, win)), MPI_ERR_RMA_SYNC);
  ASSERT_EQ(MPI_Win_start(self, 0, win), MPI_SUCCESS);
  const int v = 42 + me;
  ASSERT_EQ(MPI_Put(&v, 1, MPI_INT, me, 3 * sizeof(int), 1, MPI_INT, win),
            MPI_SUCCESS);  // displacement unit 1
  ASSERT_EQ(MPI_Win_complete(win), MPI_SUCCESS);
  ASSERT_EQ(MPI_Win_wait(win), MPI_SUCCESS);
  EXPECT_EQ(w.base<int>()[3], 42 + me);
  MPI_Group_free(&self);
  MPI_Group_free(&group);
}

INSTANTIATE_TEST_SUITE_P(Flavors, CallShapesTest,
                         testing::Values(Flavor::kAllocate, Flavor::kCreate,
                                         Flavor::kShared),
                         [](const testing::TestParamInfo<Flavor>& info) {
                           return std::string(FlavorName(info.param));
                         });

}  // namespace
