// The part of rma_fuzz that runs a program on MPI: its windows, each
// rank's actions phase by phase, the digest lines and the comparison with
// the model (model.h); and the watchdog that names the step a hang is in.
// rma_fuzz.cc parses options, gathers the digests and writes expectations.
#ifndef RMASHIM_TESTS_FUZZ_EXECUTOR_H_
#define RMASHIM_TESTS_FUZZ_EXECUTOR_H_

#include <mpi.h>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/fuzz/model.h"
#include "tests/fuzz/program.h"

namespace rma_fuzz {
namespace run {

struct Options {
  GenOptions gen;
  Filter filter;
  bool print = false;
  bool dump = false;
  bool model = true;  // check the run against the model (--no-model: not)
  int timeout = 100;
  int count = 1;
  std::string expect_file;
};

// ---- Watchdog: a hang becomes a message naming the step, then exit 124.
extern char g_step[256];
extern int g_rank;
extern int g_timeout;
void SetStep(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// SIGALRM's handler: names g_step and exits 124.
void OnAlarm(int);
// Any error on a valid program is a finding: name the call and stop.
void Check(int rc, const char* call);

// The nodes MPI_COMM_WORLD's ranks are on.
Layout LearnLayout();

struct WindowRt {
  MPI_Win win = MPI_WIN_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Group group = MPI_GROUP_NULL;
  int g = 0;     // communicator instance
  int rank = 0;  // window rank
  std::byte* base = nullptr;
  MPI_Aint bytes = 0;
  void* created = nullptr;  // MPI_Win_create and dynamic windows' memory
  // Dynamic windows: each window rank's attached memory (MPI_Get_address);
  // their displacements are addresses.
  std::vector<MPI_Aint> attached;

  // Memory the program provides (create and dynamic flavors).
  std::byte* AllocateOwn() {
    created = std::aligned_alloc(64, (bytes + 64) / 64 * 64);
    return static_cast<std::byte*>(created);
  }
  MPI_Aint Disp(int target, MPI_Aint disp) const {
    if (attached.empty() || target == MPI_PROC_NULL) return disp;
    return MPI_Aint_add(attached[target], disp);
  }
};

// Window `w` of `prog` as this process (world rank `me`) takes part in it:
// its communicator, flavor, memory and info as its spec says.
WindowRt OpenWindow(const Program& prog, int w, int me);

using OpRt = OpBuffers;

class Executor {
 public:
  // `model`: what the run must match (nullptr: not checked).
  Executor(const Program& prog, const Options& opts, int me,
           const ModelOutcome* model)
      : prog_(prog), opts_(opts), me_(me), model_(model) {}

  void Run();
  const std::vector<std::string>& lines() const { return lines_; }
  // Differences from the model found on this rank.
  long divergences() const { return divergences_; }

 private:
  void RunPhase(const Phase& p);
  void RunOp(const Op& op, OpRt& rt, const WindowRt& w,
             std::vector<MPI_Request>& reqs);
  void RunRmw(const Op& op, const WindowRt& w);
  void WaitFor(const Action& a, std::vector<MPI_Request>& reqs);
  void RecordOp(const Phase& p, const Op& op, int index, const OpRt& rt,
                std::vector<std::byte>* ordered);
  void Diverged(const char* what, const std::vector<std::byte>& want,
                const std::vector<std::byte>& got);
  void FinalDigest();

  const Program& prog_;
  const Options& opts_;
  int me_;
  std::vector<WindowRt> windows_;
  const ModelOutcome* model_;
  std::vector<std::string> lines_;
  int ops_run_ = 0;
  long divergences_ = 0;
};

}  // namespace run
}  // namespace rma_fuzz

#endif  // RMASHIM_TESTS_FUZZ_EXECUTOR_H_
