// Random differential tester for rmashim: generates a random, valid MPI RMA
// program from --seed (the same on every rank), runs it, and prints a
// digest from rank 0 that depends only on what MPI defines: final window
// contents and every deterministic fetched value (tickets as a multiset
// over all ranks). Run natively and under the shim, the digests must be
// byte-identical (tests/fuzz/fuzz_diff.sh).
//
//   rma_fuzz --seed S [--ops N] [--keep-phases 0-3,7] [--drop-ops 5,9-12]
//            [--exclude win_test,fop_pairs] [--print] [--dump]
//            [--count K] [--timeout SECONDS] [--expect-file PATH]
//
// --expect-file: rank 0 writes what a shim run must show in its profile
// (tests/profile/check_engaged.py --fuzz-expect): windows per flavor, and
// how many operations librmashim.so must serve directly (ExpectDirect).
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tests/fuzz/executor.h"
#include "tests/fuzz/model.h"
#include "tests/fuzz/program.h"

namespace rma_fuzz {
namespace {

using namespace run;  // NOLINT: the runner's own parts

// Exit status of a run that differs from the model (model.h).
constexpr int kModelDiverged = 5;

// ---- Options.

bool ParseList(const char* s, std::set<int>* out) {
  std::string str(s);
  size_t pos = 0;
  while (pos < str.size()) {
    size_t end = str.find(',', pos);
    if (end == std::string::npos) end = str.size();
    const std::string item = str.substr(pos, end - pos);
    if (!item.empty()) {
      const size_t dash = item.find('-');
      char* rest = nullptr;
      const long a = std::strtol(item.c_str(), &rest, 10);
      long b = a;
      if (dash != std::string::npos)
        b = std::strtol(item.c_str() + dash + 1, &rest, 10);
      if (*rest != '\0' || b < a) return false;
      for (long i = a; i <= b; ++i) out->insert(static_cast<int>(i));
    }
    pos = end + 1;
  }
  return true;
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--seed" && has_value) {
      o->gen.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--ops" && has_value) {
      o->gen.ops = std::atoi(argv[++i]);
    } else if (a == "--keep-phases" && has_value) {
      if (!ParseList(argv[++i], &o->filter.keep_phases)) return false;
      // An empty list would mean "all": keep an impossible phase instead.
      if (o->filter.keep_phases.empty()) o->filter.keep_phases.insert(-1);
    } else if (a == "--drop-ops" && has_value) {
      if (!ParseList(argv[++i], &o->filter.drop_ops)) return false;
    } else if (a == "--exclude" && has_value) {
      std::string list = argv[++i];
      size_t pos = 0;
      while (pos <= list.size()) {
        size_t end = list.find(',', pos);
        if (end == std::string::npos) end = list.size();
        const std::string f = list.substr(pos, end - pos);
        if (f != "win_test" && f != "fop_pairs" && !f.empty()) return false;
        if (!f.empty()) o->gen.exclude.insert(f);
        pos = end + 1;
      }
    } else if (a == "--count" && has_value) {
      o->count = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--timeout" && has_value) {
      o->timeout = std::atoi(argv[++i]);
    } else if (a == "--expect-file" && has_value) {
      o->expect_file = argv[++i];
    } else if (a == "--no-model") {
      o->model = false;
    } else if (a == "--print") {
      o->print = true;
    } else if (a == "--dump") {
      o->dump = true;
    } else {
      return false;
    }
  }
  return true;
}

// Rank 0 gathers every rank's lines, folds multisets (values sorted, so
// the order the accumulates ran in does not show), sorts and prints; with
// a model, returns how many multisets differ from it (rank 0; else 0).
long Report(const std::vector<std::string>& mine, int me, int size,
            const Program& prog, bool dump, const ModelOutcome* model) {
  std::string blob;
  for (const std::string& l : mine) blob += l + "\n";
  int len = static_cast<int>(blob.size());
  std::vector<int> lens(size), displs(size);
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (me == 0) {
    int total = 0;
    for (int r = 0; r < size; ++r) {
      displs[r] = total;
      total += lens[r];
    }
    all.resize(total);
  }
  MPI_Gatherv(blob.data(), len, MPI_CHAR, all.data(), lens.data(),
              displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (me != 0) return 0;
  std::vector<std::string> out;
  std::map<std::string, std::vector<std::string>> multisets;
  size_t pos = 0;
  while (pos < all.size()) {
    const size_t end = all.find('\n', pos);
    const std::string line = all.substr(pos, end - pos);
    pos = end + 1;
    if (line.rfind("M ", 0) == 0) {
      const size_t space = line.rfind(' ');
      multisets[line.substr(0, space)].push_back(line.substr(space + 1));
    } else {
      out.push_back(line);
    }
  }
  long diverged = 0;
  for (auto& [key, values] : multisets) {
    std::sort(values.begin(), values.end());
    if (model != nullptr) {
      const auto it = model->multisets.find(key);
      if (it == model->multisets.end() || it->second != values) {
        if (diverged++ < 8) {
          std::fprintf(stderr,
                       "[rank 0] MODEL DIVERGENCE seed %llu: multiset %s: "
                       "model %zu values, run %zu, or different values\n",
                       static_cast<unsigned long long>(prog.seed), key.c_str(),
                       it == model->multisets.end() ? 0 : it->second.size(),
                       values.size());
        }
      }
    }
    uint64_t h = kFnvInit;
    std::string joined;
    for (const std::string& v : values) {
      h = Fnv(h, v.data(), v.size());
      joined += " " + v;
    }
    char line[160];
    snprintf(line, sizeof line, "%s values %zu hash %016" PRIx64, key.c_str(),
             values.size(), h);
    out.push_back(std::string(line) +
                  (dump ? " data" + joined : std::string()));
  }
  std::sort(out.begin(), out.end());
  std::printf("rma_fuzz seed %llu ranks %d nodes %d phases %zu ops %d\n",
              static_cast<unsigned long long>(prog.seed), size,
              prog.layout.nodes, prog.phases.size(), prog.total_ops);
  for (const std::string& l : out) std::printf("%s\n", l.c_str());
  std::fflush(stdout);
  if (model != nullptr && model->multisets.size() != multisets.size()) {
    ++diverged;  // a multiset the run did not record at all
  }
  return diverged;
}

// ---- What the shim must show (--expect-file).

// Windows (profile records: one per communicator instance) per flavor, and
// the operations, summed over ranks, that librmashim.so serves directly by
// design (docs/how-it-works.md; README.md, "Limitations"): on an allocate,
// shared or create window whose ranks share one node, every node-local
// operation (self included); on a window spanning nodes, node-local put/get
// (request-based too, and the put/get halves of counters) outside PSCW
// epochs, and node-local accumulates while the origin holds an exclusive
// lock on the target (the rest of the accumulate family and PSCW go to MPI
// there). On MPI_Win_create windows (cross-memory attach) only for elements
// other than MINLOC/MAXLOC pairs (layouts with padding inside elements may
// go to MPI). MPI_PROC_NULL targets are not operations.
struct Expectation {
  long windows[4] = {};  // by Flavor
  long direct = 0;
};

void ExpectDirect(const Program& prog, const Filter& filter, Expectation* e) {
  for (const WindowSpec& w : prog.windows) {
    e->windows[static_cast<int>(w.flavor)] +=
        static_cast<long>(w.groups.size());
  }
  for (const Phase& p : prog.phases) {
    if (!filter.Keeps(p)) continue;
    const WindowSpec& w = prog.windows[p.window];
    if (w.flavor == Flavor::kDynamic) continue;
    const bool create = w.flavor == Flavor::kCreate;
    for (size_t g = 0; g < w.groups.size(); ++g) {
      const std::vector<int>& group = w.groups[g];
      bool one_node = true;
      for (int r : group) {
        one_node =
            one_node && prog.layout.node_of[r] == prog.layout.node_of[group[0]];
      }
      for (size_t r = 0; r < p.plans[g].size(); ++r) {
        const RankPlan& plan = p.plans[g][r];
        std::set<int> exclusive;  // targets this rank holds locked exclusively
        for (const Action& a : plan.actions) {
          if (a.act == Act::kLock && a.lock_type == MPI_LOCK_EXCLUSIVE) {
            exclusive.insert(a.target);
          } else if (a.act == Act::kUnlock) {
            exclusive.erase(a.target);
          }
          if (a.act != Act::kOp) continue;
          const Op& op = plan.ops[a.op];
          if (!filter.Keeps(op) || op.target == MPI_PROC_NULL) continue;
          if (prog.layout.node_of[group[r]] !=
              prog.layout.node_of[group[op.target]]) {
            continue;  // remote: MPI's
          }
          if (create && (Elem(op.elem).group & kPair) != 0) continue;
          const bool put_get =
              op.kind == OpKind::kPut || op.kind == OpKind::kGet ||
              op.kind == OpKind::kRput || op.kind == OpKind::kRget;
          const bool all = one_node || exclusive.count(op.target) != 0;
          if (op.kind == OpKind::kRmw) {  // a read, then a write (RunRmw)
            e->direct += all ? 2 : (op.rmw_read == 0) + (op.rmw_write == 0);
          } else if (all || (put_get && p.kind != PhaseKind::kPscw)) {
            e->direct += 1;
          }
        }
      }
    }
  }
}

void WriteExpectation(const std::string& path, const Expectation& e) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "rma_fuzz: cannot write %s\n", path.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  std::fprintf(f, "allocate=%ld shared=%ld create=%ld dynamic=%ld direct=%ld\n",
               e.windows[static_cast<int>(Flavor::kAllocate)],
               e.windows[static_cast<int>(Flavor::kShared)],
               e.windows[static_cast<int>(Flavor::kCreate)],
               e.windows[static_cast<int>(Flavor::kDynamic)], e.direct);
  std::fclose(f);
}

int Main(int argc, char** argv) {
  Options opts;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  if (!ParseArgs(argc, argv, &opts)) {
    if (g_rank == 0) {
      std::fprintf(stderr,
                   "usage: rma_fuzz --seed S [--ops N] [--keep-phases LIST] "
                   "[--drop-ops LIST] [--exclude FEATURES] [--print] [--dump] "
                   "[--count K] [--timeout SECONDS] [--expect-file PATH] "
                   "[--no-model]\n");
    }
    MPI_Finalize();
    return 2;
  }
  g_timeout = opts.timeout;
  signal(SIGALRM, OnAlarm);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const Layout layout = LearnLayout();
  Expectation expectation;
  long model_divergences = 0;
  // --count K: seeds S..S+K-1 in one MPI job, one after another (saves the
  // start-up of K-1 jobs; each program frees everything it created).
  for (int k = 0; k < opts.count; ++k) {
    alarm(opts.timeout);  // per program
    GenOptions gen = opts.gen;
    gen.seed += k;
    SetStep("generating seed %llu", static_cast<unsigned long long>(gen.seed));
    const Program prog = Generate(gen, layout);
    ExpectDirect(prog, opts.filter, &expectation);
    if (opts.print) {
      if (g_rank == 0) std::fputs(Listing(prog, opts.filter).c_str(), stdout);
    } else {
      const ModelOutcome model = RunModel(prog, opts.filter);
      Executor exec(prog, opts, g_rank, opts.model ? &model : nullptr);
      exec.Run();
      SetStep("report");
      long diverged =
          exec.divergences() + Report(exec.lines(), g_rank, size, prog,
                                      opts.dump, opts.model ? &model : nullptr);
      long total = 0;
      MPI_Allreduce(&diverged, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      if (opts.model && g_rank == 0) {
        // Outside the digest (native and shim runs may differ here).
        std::fprintf(
            stderr, "rma_fuzz seed %llu: %s (%ld divergences)\n",
            static_cast<unsigned long long>(prog.seed),
            total == 0 ? "matches the model" : "DIVERGES FROM THE MODEL",
            total);
      }
      model_divergences += total;
    }
  }  // datatypes are freed with each program, before MPI_Finalize
  if (!opts.expect_file.empty() && g_rank == 0) {
    WriteExpectation(opts.expect_file, expectation);
  }
  alarm(opts.timeout);
  SetStep("MPI_Finalize");
  MPI_Finalize();
  return model_divergences == 0 ? 0 : kModelDiverged;
}

}  // namespace
}  // namespace rma_fuzz

int main(int argc, char** argv) { return rma_fuzz::Main(argc, argv); }
