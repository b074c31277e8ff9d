// main() for GoogleTest suites run by mpirun: every rank runs every test, a
// test fails if it failed on any rank, and only rank 0 reports to Bazel.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

namespace {

// Makes a test's failure on any rank a failure on every rank, so ranks stay
// in step (no rank runs ahead into the next collective test alone).
class AgreeOnFailure : public testing::EmptyTestEventListener {
  void OnTestEnd(const testing::TestInfo& info) override {
    int failed = info.result()->Failed() ? 1 : 0, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any && !failed) {
      ADD_FAILURE() << "failed on another rank";
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
#ifdef MPI_GTEST_THREAD_MULTIPLE
  // Suites that call MPI from several threads at once.
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided != MPI_THREAD_MULTIPLE) {
    std::fprintf(stderr, "MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
#else
  MPI_Init(&argc, &argv);
#endif
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    // All ranks share Bazel's output paths; only rank 0 writes them.
    unsetenv("XML_OUTPUT_FILE");
    unsetenv("TEST_PREMATURE_EXIT_FILE");
    unsetenv("GTEST_OUTPUT");
  }
  testing::InitGoogleTest(&argc, argv);
  testing::UnitTest::GetInstance()->listeners().Append(new AgreeOnFailure);
  const int rc = RUN_ALL_TESTS();
  int any = rc, worst = 0;
  MPI_Allreduce(&any, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
