// The shared windows of shim_sync_util.h: made by a GoogleTest environment
// before the first test and freed (collectively) after the last.
#include "tests/mpi/shim_sync_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

namespace rmashim_test::sync {
namespace {

constexpr int kSharedInts = 256;
constexpr int kSharedInt64s = 64;

class SharedWindows : public testing::Environment {
 public:
  void SetUp() override {
    // Room for every user: at most 256 ints, or two per rank, or 4 + size
    // int64s.
    ints = new AllocWindow(std::max(kSharedInts, 2 * Size() + 2) * sizeof(int),
                           sizeof(int));
    int64s = new AllocWindow(
        std::max(kSharedInt64s, 4 + Size()) * sizeof(int64_t), sizeof(int64_t));
  }
  void TearDown() override {
    delete ints;
    delete int64s;
  }
  AllocWindow* ints = nullptr;
  AllocWindow* int64s = nullptr;
};

SharedWindows* const g_windows = static_cast<SharedWindows*>(
    testing::AddGlobalTestEnvironment(new SharedWindows));

}  // namespace

AllocWindow& SharedIntWindow() { return *g_windows->ints; }
AllocWindow& SharedInt64Window() { return *g_windows->int64s; }

}  // namespace rmashim_test::sync
