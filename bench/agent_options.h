// What bench/agent.cc and bench/dart_agent.cc share: their options
// (--iters, --compute-ms, --label; anything else aborts the run, so a
// misspelt option never yields a run with the defaults), a clock, and a
// target that computes without calling MPI.
#ifndef RMASHIM_BENCH_AGENT_OPTIONS_H_
#define RMASHIM_BENCH_AGENT_OPTIONS_H_

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace agent_bench {

struct Options {
  int iters = 2000;
  int compute_ms = 1000;
  std::string label = "run";
};

inline Options Parse(int argc, char** argv, const char* program) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--iters" && i + 1 < argc) {
      o.iters = std::atoi(argv[++i]);
    } else if (a == "--compute-ms" && i + 1 < argc) {
      o.compute_ms = std::atoi(argv[++i]);
    } else if (a == "--label" && i + 1 < argc) {
      o.label = argv[++i];
    } else {
      std::fprintf(stderr, "%s: unknown argument %s\n", program, a.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  return o;
}

inline double Now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Busy for `ms` milliseconds without calling MPI.
inline void Compute(int ms) {
  const double end = Now() + ms / 1000.0;
  volatile uint64_t x = 0;
  while (Now() < end) {
    for (int i = 0; i < 1000; ++i) x = x + i;
  }
}

}  // namespace agent_bench

#endif  // RMASHIM_BENCH_AGENT_OPTIONS_H_
