// A window of a generated program (generate.cc's Generate): its flavor,
// communicator order, regions of element types and per-rank sizes and
// displacement units, drawn from the program's random stream.
#include <algorithm>
#include <vector>

#include "tests/fuzz/phase_gen.h"
#include "tests/fuzz/program.h"

namespace rma_fuzz {
namespace gen {
namespace {

std::vector<int> NodeRanks(const Layout& layout, int node, bool reversed) {
  std::vector<int> ranks;
  for (int r = 0; r < layout.size; ++r) {
    if (layout.node_of[r] == node) ranks.push_back(r);
  }
  if (reversed) std::reverse(ranks.begin(), ranks.end());
  return ranks;
}

MPI_Aint Align16(MPI_Aint x) { return (x + 15) / 16 * 16; }

}  // namespace

WindowSpec MakeWindow(const Layout& layout, Rng& rng) {
  WindowSpec w;
  w.flavor = static_cast<Flavor>(rng.Weighted({5, 3, 3, 2}));
  const bool reversed = rng.Percent(30);
  if (w.flavor == Flavor::kShared) {
    w.comm = reversed ? CommKind::kNodeReversed : CommKind::kNode;
    w.noncontig = rng.Percent(40);
    for (int node = 0; node < layout.nodes; ++node) {
      w.groups.push_back(NodeRanks(layout, node, reversed));
    }
  } else {
    w.comm = reversed ? CommKind::kWorldReversed : CommKind::kWorld;
    std::vector<int> all(layout.size);
    for (int r = 0; r < layout.size; ++r)
      all[r] = reversed ? layout.size - 1 - r : r;
    w.groups.push_back(all);
  }
  std::vector<int> weights;
  for (const ElemType& e : ElemTypes()) weights.push_back(e.weight);
  const int nregions = rng.Range(1, 6);
  MPI_Aint at = 0;
  std::vector<MPI_Aint> ends;
  for (int i = 0; i < nregions; ++i) {
    Region r;
    r.elem = rng.Weighted(weights);
    const int ext = Elem(r.elem).extent;
    switch (rng.Weighted({6, 3, 1})) {
      case 0:
        r.count = rng.Range(1, 16);
        break;
      case 1:
        r.count = rng.Range(17, 64);
        break;
      default:  // crosses 4 KiB pages (the shim's accumulate stripes)
        r.count = std::max(1, rng.Range(4096, 9000) / ext);
        break;
    }
    if (rng.Percent(20)) at += 16;
    r.offset = at;
    at = Align16(at + static_cast<MPI_Aint>(r.count) * ext);
    ends.push_back(at);
    w.regions.push_back(r);
  }
  w.nocheck_locks = rng.Percent(25);
  const int uniform_du = rng.Pick(std::vector<int>{1, 4, 8});
  const bool per_rank_du = rng.Percent(25);
  const bool per_rank_size = rng.Percent(25);
  const bool odd_sizes = rng.Percent(15);
  for (int r = 0; r < layout.size; ++r) {
    int du = per_rank_du ? rng.Pick(std::vector<int>{1, 4, 8}) : uniform_du;
    if (w.flavor == Flavor::kDynamic) du = 1;  // dynamic windows address bytes
    w.disp_unit.push_back(du);
    int fit = nregions;
    if (per_rank_size && rng.Percent(50)) fit = rng.Range(0, nregions);
    w.regions_on.push_back(fit);
    // Now and then a size that is no multiple of 16: a tail no operation
    // touches (MPICH 4.0.2 misplaces data in such MPI_Win_allocate
    // windows; the model says where it belongs).
    const MPI_Aint tail = odd_sizes ? rng.Range(1, 15) : 0;
    w.bytes.push_back(fit == 0 ? 0 : ends[fit - 1] + tail);
  }
  return w;
}

}  // namespace gen
}  // namespace rma_fuzz
