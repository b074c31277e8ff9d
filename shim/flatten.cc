#include "shim/flatten.h"

#include <memory>

#include "shim/element_ops.h"

namespace rmashim {
namespace {

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
      case MPI_COMBINER_RESIZED:  // lb/extent matter only to the caller's stride
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
      default:
        return kNotFlattened;  // darray
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
        runs.back().offset + runs.back().count * out_->element_extent == offset) {
      runs.back().count += count;
    } else {
      runs.push_back({offset, count});
    }
    return MPI_SUCCESS;
  }

  FlatType* out_;
};

}  // namespace

int Flatten(MPI_Datatype type, int count, FlatType* out) {
  *out = FlatType{};
  if (count < 0) return MPI_ERR_COUNT;
  Node root;
  if (int rc = Parse(type, &root)) return rc;
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  Expander expander(out);
  if (root.combiner == MPI_COMBINER_NAMED) {  // one run of `count` elements
    out->element = type;
    out->element_extent = extent;
    out->elements = count;
    if (count > 0) out->runs.push_back({0, count});
    return MPI_SUCCESS;
  }
  for (int i = 0; i < count; ++i) {
    if (int rc = expander.Expand(root, i * extent)) return rc;
  }
  return MPI_SUCCESS;
}

}  // namespace rmashim
