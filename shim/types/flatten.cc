#include "shim/types/flatten.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "shim/types/element_ops.h"

namespace rmashim {
namespace {

// A valid type built with a constructor not handled here
// (FlattenResult::unhandled), in the recursion's int codes.
constexpr int kUnhandled = -1;

// A datatype's construction as MPI_Type_get_contents reports it, read once
// so expansion loops make no MPI calls.
struct Node {
  int combiner = MPI_COMBINER_NAMED;
  MPI_Datatype named = MPI_DATATYPE_NULL;  // for MPI_COMBINER_NAMED
  std::vector<int> ints;
  std::vector<MPI_Aint> aints;
  std::vector<std::unique_ptr<Node>> children;
  std::vector<MPI_Aint> child_extents;
};

int Parse(MPI_Datatype type, Node* node) {
  int ni, na, nd, combiner;
  if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS) {
    return MPI_ERR_TYPE;
  }
  node->combiner = combiner;
  if (combiner == MPI_COMBINER_NAMED) {
    node->named = type;
    return IsPredefinedType(type) ? MPI_SUCCESS : MPI_ERR_TYPE;
  }
  node->ints.resize(ni);
  node->aints.resize(na);
  std::vector<MPI_Datatype> types(nd);
  PMPI_Type_get_contents(type, ni, na, nd, node->ints.data(),
                         node->aints.data(), types.data());
  int rc = MPI_SUCCESS;
  for (MPI_Datatype child : types) {
    auto sub = std::make_unique<Node>();
    if (rc == MPI_SUCCESS) rc = Parse(child, sub.get());
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(child, &lb, &extent);
    node->child_extents.push_back(extent);
    node->children.push_back(std::move(sub));
    int cni, cna, cnd, ccomb;
    PMPI_Type_get_envelope(child, &cni, &cna, &cnd, &ccomb);
    if (ccomb != MPI_COMBINER_NAMED) PMPI_Type_free(&child);
  }
  return rc;
}

class Expander {
 public:
  explicit Expander(FlatType* out) : out_(out) {}

  int Expand(const Node& n, MPI_Aint base) {
    const std::vector<int>& I = n.ints;
    const std::vector<MPI_Aint>& A = n.aints;
    switch (n.combiner) {
      case MPI_COMBINER_NAMED:
        return Emit(n.named, base, 1);
      case MPI_COMBINER_DUP:
      case MPI_COMBINER_RESIZED:  // lb/extent matter only to the caller's
                                  // stride
        return Expand(*n.children[0], base);
      case MPI_COMBINER_CONTIGUOUS:
        return Repeat(n, 0, base, I[0]);
      case MPI_COMBINER_VECTOR:
      case MPI_COMBINER_HVECTOR: {
        const MPI_Aint stride = n.combiner == MPI_COMBINER_VECTOR
                                    ? I[2] * n.child_extents[0]
                                    : A[0];
        for (int i = 0; i < I[0]; ++i) {
          if (int rc = Repeat(n, 0, base + i * stride, I[1])) return rc;
        }
        return MPI_SUCCESS;
      }
      case MPI_COMBINER_INDEXED:
      case MPI_COMBINER_HINDEXED: {
        const int count = I[0];
        for (int i = 0; i < count; ++i) {
          const MPI_Aint disp = n.combiner == MPI_COMBINER_INDEXED
                                    ? I[1 + count + i] * n.child_extents[0]
                                    : A[i];
          if (int rc = Repeat(n, 0, base + disp, I[1 + i])) return rc;
        }
        return MPI_SUCCESS;
      }
      case MPI_COMBINER_INDEXED_BLOCK:
      case MPI_COMBINER_HINDEXED_BLOCK: {
        for (int i = 0; i < I[0]; ++i) {
          const MPI_Aint disp = n.combiner == MPI_COMBINER_INDEXED_BLOCK
                                    ? I[2 + i] * n.child_extents[0]
                                    : A[i];
          if (int rc = Repeat(n, 0, base + disp, I[1])) return rc;
        }
        return MPI_SUCCESS;
      }
      case MPI_COMBINER_STRUCT: {
        for (int i = 0; i < I[0]; ++i) {
          if (int rc = Repeat(n, i, base + A[i], I[1 + i])) return rc;
        }
        return MPI_SUCCESS;
      }
      case MPI_COMBINER_SUBARRAY:
        return Subarray(n, base);
      case MPI_COMBINER_DARRAY:
        return Darray(n, base);
      default:
        return kUnhandled;  // constructors MPI-3 does not define
    }
  }

  // `count` copies of child `c`, `child_extents[c]` apart.
  int Repeat(const Node& n, size_t c, MPI_Aint base, MPI_Aint count) {
    const Node& child = *n.children[c];
    if (child.combiner == MPI_COMBINER_NAMED) {
      return Emit(child.named, base, count);
    }
    for (MPI_Aint k = 0; k < count; ++k) {
      if (int rc = Expand(child, base + k * n.child_extents[c])) return rc;
    }
    return MPI_SUCCESS;
  }

 private:
  int Subarray(const Node& n, MPI_Aint base) {
    const int ndims = n.ints[0];
    const int* sizes = &n.ints[1];
    const int* subsizes = &n.ints[1 + ndims];
    const int* starts = &n.ints[1 + 2 * ndims];
    const bool c_order = n.ints[1 + 3 * ndims] == MPI_ORDER_C;
    // Element strides of each dimension; the fastest one is innermost.
    std::vector<MPI_Aint> stride(ndims);
    MPI_Aint s = n.child_extents[0];
    for (int k = 0; k < ndims; ++k) {
      const int d = c_order ? ndims - 1 - k : k;
      stride[d] = s;
      s *= sizes[d];
    }
    const int inner = c_order ? ndims - 1 : 0;
    std::vector<int> index(ndims, 0);
    for (int d = 0; d < ndims; ++d) {
      if (subsizes[d] == 0) return MPI_SUCCESS;
    }
    while (true) {
      MPI_Aint offset = base;
      for (int d = 0; d < ndims; ++d) {
        offset += (starts[d] + (d == inner ? 0 : index[d])) * stride[d];
      }
      if (int rc = Repeat(n, 0, offset, subsizes[inner])) return rc;
      // Odometer over the outer dimensions.
      int k = 0;
      for (; k < ndims; ++k) {
        const int d = c_order ? ndims - 1 - k : k;
        if (d == inner) continue;
        if (++index[d] < subsizes[d]) break;
        index[d] = 0;
      }
      if (k == ndims) return MPI_SUCCESS;
    }
  }

  // MPI_Type_create_darray (MPI-3 4.1.4): this process's part of a global
  // array distributed over a process grid. The grid is row-major whatever
  // the array order; per dimension the part is a block (BLOCK, darg or
  // ceil(gsize / psize) wide), blocks of darg every psize * darg (CYCLIC,
  // darg 1 by default) or the whole dimension (NONE). Elements come in
  // increasing index order in every dimension, outermost slowest, at their
  // places in the global array.
  int Darray(const Node& n, MPI_Aint base) {
    const int* I = n.ints.data();
    const int size = I[0], rank = I[1], ndims = I[2];
    const int* gsizes = I + 3;
    const int* distribs = gsizes + ndims;
    const int* dargs = distribs + ndims;
    const int* psizes = dargs + ndims;
    const bool c_order = I[3 + 4 * ndims] == MPI_ORDER_C;
    if (ndims <= 0 || rank < 0 || rank >= size) return kUnhandled;
    // This process's coordinates in the row-major grid.
    std::vector<int> coord(ndims);
    for (int d = ndims - 1, r = rank; d >= 0; --d) {
      coord[d] = r % psizes[d];
      r /= psizes[d];
    }
    // Per dimension, the runs [first, first + len) of indices held here.
    std::vector<std::vector<std::pair<MPI_Aint, MPI_Aint>>> runs(ndims);
    for (int d = 0; d < ndims; ++d) {
      const MPI_Aint g = gsizes[d], p = psizes[d], c = coord[d];
      switch (distribs[d]) {
        case MPI_DISTRIBUTE_NONE:
          runs[d].push_back({0, g});
          break;
        case MPI_DISTRIBUTE_BLOCK: {
          const MPI_Aint b =
              dargs[d] == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : dargs[d];
          const MPI_Aint first = c * b, last = std::min(g, first + b);
          if (first < last) runs[d].push_back({first, last - first});
          break;
        }
        case MPI_DISTRIBUTE_CYCLIC: {
          const MPI_Aint b =
              dargs[d] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : dargs[d];
          for (MPI_Aint first = c * b; first < g; first += p * b) {
            runs[d].push_back({first, std::min(b, g - first)});
          }
          break;
        }
        default:
          return kUnhandled;
      }
      if (runs[d].empty()) return MPI_SUCCESS;  // holds nothing
    }
    // Element strides of the global array (its own order).
    std::vector<MPI_Aint> stride(ndims);
    MPI_Aint s = n.child_extents[0];
    for (int k = 0; k < ndims; ++k) {
      const int d = c_order ? ndims - 1 - k : k;
      stride[d] = s;
      s *= gsizes[d];
    }
    // Odometer over every dimension's runs and the indices inside them,
    // slowest dimension first; the fastest dimension emits whole runs.
    const int inner = c_order ? ndims - 1 : 0;
    std::vector<size_t> run(ndims, 0);
    std::vector<MPI_Aint> step(ndims, 0);  // index within the current run
    while (true) {
      MPI_Aint offset = base;
      for (int d = 0; d < ndims; ++d) {
        if (d != inner) offset += (runs[d][run[d]].first + step[d]) * stride[d];
      }
      for (const auto& [first, len] : runs[inner]) {
        if (int rc = Repeat(n, 0, offset + first * stride[inner], len)) {
          return rc;
        }
      }
      int k = 0;
      for (; k < ndims; ++k) {  // fastest outer dimension first
        const int d = c_order ? ndims - 1 - k : k;
        if (d == inner) continue;
        if (++step[d] < runs[d][run[d]].second) break;
        step[d] = 0;
        if (++run[d] < runs[d].size()) break;
        run[d] = 0;
      }
      if (k == ndims) return MPI_SUCCESS;
    }
  }

  int Emit(MPI_Datatype element, MPI_Aint offset, MPI_Aint count) {
    if (count <= 0) return MPI_SUCCESS;
    if (out_->element == MPI_DATATYPE_NULL) {
      out_->element = element;
      MPI_Aint lb;
      PMPI_Type_get_extent(element, &lb, &out_->element_extent);
    } else if (out_->element != element) {
      return MPI_ERR_TYPE;  // MPI: built from one predefined type only
    }
    out_->elements += count;
    std::vector<ElementRun>& runs = out_->runs;
    if (!runs.empty() &&
        runs.back().offset + runs.back().count * out_->element_extent ==
            offset) {
      runs.back().count += count;
    } else {
      runs.push_back({offset, count});
    }
    return MPI_SUCCESS;
  }

  FlatType* out_;
};

// The public result of the recursion's code.
FlattenResult ResultOf(int rc) {
  if (rc == kUnhandled) return {.unhandled = true};
  return {.rc = rc};
}

}  // namespace

FlattenResult Flatten(MPI_Datatype type, int count, FlatType* out) {
  *out = FlatType{};
  if (count < 0) return {.rc = MPI_ERR_COUNT};
  Node root;
  if (int rc = Parse(type, &root)) return ResultOf(rc);
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  Expander expander(out);
  if (root.combiner == MPI_COMBINER_NAMED) {  // one run of `count` elements
    out->element = type;
    out->element_extent = extent;
    out->elements = count;
    if (count > 0) out->runs.push_back({0, count});
    return {};
  }
  for (int i = 0; i < count; ++i) {
    if (int rc = expander.Expand(root, i * extent)) return ResultOf(rc);
  }
  return {};
}

}  // namespace rmashim
