// main() for DART GoogleTest suites run by mpirun: dart_init starts MPI and
// DART, every rank runs every test, a test fails if it failed on any rank,
// and only rank 0 reports to Bazel.
#include <dart/dart.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>

namespace {

// Keeps ranks in step: a failure on one rank is a failure on all.
class AgreeOnFailure : public testing::EmptyTestEventListener {
  void OnTestEnd(const testing::TestInfo& info) override {
    int failed = info.result()->Failed() ? 1 : 0, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any && !failed) ADD_FAILURE() << "failed on another rank";
  }
};

}  // namespace

int main(int argc, char** argv) {
  // DART_TEST_THREAD_MULTIPLE=1: dart_init_thread, which must provide
  // DART_THREAD_MULTIPLE (MPICH does).
  if (std::getenv("DART_TEST_THREAD_MULTIPLE") != nullptr) {
    dart_thread_support_level_t level = DART_THREAD_SINGLE;
    if (dart_init_thread(&argc, &argv, &level) != DART_OK) return 1;
    if (level != DART_THREAD_MULTIPLE) return 1;
  } else if (dart_init(&argc, &argv) != DART_OK) {
    return 1;
  }
  dart_global_unit_t me;
  dart_myid(&me);
  if (me.id != 0) {
    unsetenv("XML_OUTPUT_FILE");
    unsetenv("TEST_PREMATURE_EXIT_FILE");
    unsetenv("GTEST_OUTPUT");
  }
  testing::InitGoogleTest(&argc, argv);
  testing::UnitTest::GetInstance()->listeners().Append(new AgreeOnFailure);
  const int rc = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (dart_exit() != DART_OK) return 1;
  return worst;
}
