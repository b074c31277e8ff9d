// Intra- vs inter-NUMA placement, as in the DART paper: put and get latency
// (+ flush) between two ranks bound to cores of one NUMA domain, then of two
// domains, native MPICH window vs rmashim window, with the CPU floor. Each
// rank binds its CPU and memory with hwloc before the windows are allocated,
// so window memory lies in its owner's domain. On a machine with a single
// NUMA domain there is nothing to compare: it says so and exits cleanly.
// Rank 0 is the origin, rank 1 the target; other ranks idle.
#include <hwloc.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/pair_rma.h"
#include "include/rmashim/rmashim.h"

namespace {

using namespace rmashim_bench;  // NOLINT

constexpr size_t kMaxBytes = size_t{1} << 20;

// Where this rank runs according to the shim (rmashim_get_locality), or
// nullopt-like -1s when the shim is not preloaded.
rmashim_locality_t Locality() {
  rmashim_locality_t loc{-1, -1, -1, -1, -1};
  using Fn = int (*)(rmashim_locality_t*);
  if (auto fn =
          reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "rmashim_get_locality")))
    fn(&loc);
  return loc;
}

// Binds this process to `pu` and its memory to the NUMA domain `node`;
// returns what failed, empty on success.
std::string Bind(hwloc_topology_t topo, hwloc_obj_t pu, hwloc_obj_t node) {
  std::string failed;
  if (hwloc_set_cpubind(topo, pu->cpuset, HWLOC_CPUBIND_PROCESS) != 0)
    failed += "cpu ";
  if (hwloc_set_membind(topo, node->nodeset, HWLOC_MEMBIND_BIND,
                        HWLOC_MEMBIND_PROCESS | HWLOC_MEMBIND_BYNODESET) != 0) {
    failed += "memory ";
  }
  return failed;
}

// The `index`-th PU of NUMA domain `node`, or nullptr.
hwloc_obj_t PuIn(hwloc_topology_t topo, hwloc_obj_t node, int index) {
  return hwloc_get_obj_inside_cpuset_by_type(topo, node->cpuset, HWLOC_OBJ_PU,
                                             index);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  RequireRanks(2);
  const Flags flags = ParseFlags(argc, argv);
  Verifier verifier("numa");
  hwloc_topology_t topo;
  hwloc_topology_init(&topo);
  hwloc_topology_load(topo);
  const int domains = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  MPI_Comm pair = PairComm();
  if (pair != MPI_COMM_NULL) {
    const bool origin = Rank(pair) == kOrigin;
    rmashim_locality_t loc[2];
    const rmashim_locality_t mine = Locality();
    MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, loc, sizeof(mine), MPI_BYTE,
                  pair);
    Table table({"placement", "op", "bytes", "native_us", "shim_us", "floor_us",
                 "speedup", "shim/floor", "origin_pu", "target_pu", "note"});
    std::string skip;
    if (domains < 2) {
      skip = "this machine has " + std::to_string(domains) +
             " NUMA domain: intra- vs inter-NUMA comparison skipped";
    } else if (loc[0].node_id != loc[1].node_id) {
      skip = "ranks 0 and 1 are on different nodes: skipped";
    }
    if (origin) {
      std::fprintf(
          stderr,
          "numa: %d NUMA domain(s); at MPI_Init rank 0 ran on NUMA %d core %d, "
          "rank 1 on NUMA %d core %d (node %d / %d)\n",
          domains, loc[0].numa_domain, loc[0].core, loc[1].numa_domain,
          loc[1].core, loc[0].node_id, loc[1].node_id);
      if (!skip.empty()) std::fprintf(stderr, "numa: %s\n", skip.c_str());
    }
    if (skip.empty()) {
      hwloc_obj_t node0 = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, 0);
      hwloc_obj_t node1 = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, 1);
      struct Placement {
        const char* name;
        hwloc_obj_t target_pu, target_node;
      };
      const Placement placements[] = {
          {"intra-NUMA", PuIn(topo, node0, 1), node0},
          {"inter-NUMA", PuIn(topo, node1, 0), node1}};
      OpBuffers buffers(kMaxBytes, 1);
      for (const Placement& p : placements) {
        if (p.target_pu == nullptr) {
          if (origin)
            std::fprintf(stderr, "numa: %s: no second core there, skipped\n",
                         p.name);
          continue;
        }
        hwloc_obj_t pu = origin ? PuIn(topo, node0, 0) : p.target_pu;
        const std::string failed =
            Bind(topo, pu, origin ? node0 : p.target_node);
        if (!failed.empty()) {
          std::fprintf(stderr, "numa: rank %d: binding %sfailed\n", Rank(),
                       failed.c_str());
        }
        int bound = failed.empty();
        MPI_Allreduce(MPI_IN_PLACE, &bound, 1, MPI_INT, MPI_MIN, pair);
        const std::string note =
            bound ? "bound" : "binding failed (see stderr)";
        WindowPair windows(kMaxBytes, pair);  // first touched after binding
        char* peer = origin ? MappedPeer(windows.shim.win, kTarget) : nullptr;
        for (size_t bytes :
             {size_t{8}, size_t{4096}, size_t{65536}, kMaxBytes}) {
          for (Op op : {Op::kPut, Op::kGet}) {
            for (const Window* w : {&windows.native, &windows.shim}) {
              VerifyOp(pair, w->win, w->base, Sync::kFlush, op, bytes, verifier,
                       w->name);
            }
            if (flags.quick && bytes != 8) continue;
            const double batch_ms = BatchMs(flags);
            const double native =
                MeasureOp(pair, windows.native.win, Sync::kFlush, op, bytes, 1,
                          buffers, batch_ms);
            const double shim = MeasureOp(pair, windows.shim.win, Sync::kFlush,
                                          op, bytes, 1, buffers, batch_ms);
            const double floor =
                peer ? FloorUs(op, peer, bytes, buffers, batch_ms) : 0;
            table.Add({p.name, std::string(Name(op)) + "+flush",
                       std::to_string(bytes), Num(native, 4), Num(shim, 4),
                       Num(floor, 4), Ratio(native, shim), Ratio(shim, floor),
                       std::to_string(PuIn(topo, node0, 0)->os_index),
                       std::to_string(p.target_pu->os_index), note});
          }
        }
      }
    } else if (origin && !flags.csv) {
      std::printf("%s\n", skip.c_str());
    }
    if (origin && (skip.empty() || flags.csv)) table.Print(flags.csv);
    MPI_Comm_free(&pair);
  }
  hwloc_topology_destroy(topo);
  const int rc = verifier.Finish();
  MPI_Finalize();
  return rc;
}
