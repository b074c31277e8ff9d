#include "tests/fuzz/types.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/elements.h"

namespace rma_fuzz {
namespace {

using Kind = TypeNode::Kind;

[[noreturn]] void ModelBug(const TypeNode& t, const char* what, long model,
                           long mpi) {
  std::fprintf(stderr,
               "rma_fuzz: datatype model bug (%s: model %ld, MPI %ld) "
               "for %s\n",
               what, model, mpi, Describe(t).c_str());
  std::abort();
}

// Appends `n` copies of the child's map, copy i at displs[i] slots.
void AddCopies(TypeNode& t, long displ) {
  for (long s : t.child->map) t.map.push_back(displ + s);
}

// Computes the map and the model's lb/extent, then creates the MPI type and
// checks the model against it.
void Build(TypeNode& t) {
  const ElemType& e = Elem(t.elem);
  const long x = e.extent;
  if (t.kind == Kind::kNamed) {
    t.mpi = e.type;
    t.map = {0};
    t.lb = 0;
    t.extent = 1;
    return;
  }
  const TypeNode& c = *t.child;
  const long ce = c.extent;
  std::vector<long> copies;  // copy displacements in slots
  switch (t.kind) {
    case Kind::kContiguous:
      for (int i = 0; i < t.count; ++i) copies.push_back(i * ce);
      break;
    case Kind::kVector:
      for (int i = 0; i < t.count; ++i)
        for (int j = 0; j < t.blocklen; ++j)
          copies.push_back((i * t.stride + j) * ce);
      break;
    case Kind::kHvector:
      for (int i = 0; i < t.count; ++i)
        for (int j = 0; j < t.blocklen; ++j)
          copies.push_back(i * t.stride + j * ce);
      break;
    case Kind::kIndexed:
      for (size_t i = 0; i < t.displs.size(); ++i)
        for (int j = 0; j < t.blocklens[i]; ++j)
          copies.push_back((t.displs[i] + j) * ce);
      break;
    case Kind::kIndexedBlock:
      for (size_t i = 0; i < t.displs.size(); ++i)
        for (int j = 0; j < t.blocklen; ++j)
          copies.push_back((t.displs[i] + j) * ce);
      break;
    case Kind::kHindexed:
    case Kind::kStruct:
      for (size_t i = 0; i < t.displs.size(); ++i)
        for (int j = 0; j < t.blocklens[i]; ++j)
          copies.push_back(t.displs[i] + j * ce);
      break;
    case Kind::kHindexedBlock:
      for (size_t i = 0; i < t.displs.size(); ++i)
        for (int j = 0; j < t.blocklen; ++j)
          copies.push_back(t.displs[i] + j * ce);
      break;
    case Kind::kResized:
      copies.push_back(0);
      break;
    case Kind::kSubarray: {
      const int n = static_cast<int>(t.sizes.size());
      std::vector<long> stride(n);
      long s = ce;
      for (int k = 0; k < n; ++k) {
        const int d = t.order_c ? n - 1 - k : k;
        stride[d] = s;
        s *= t.sizes[d];
      }
      std::vector<int> idx(n, 0);
      bool empty = false;
      for (int d = 0; d < n; ++d) empty |= t.subsizes[d] == 0;
      while (!empty) {
        long off = 0;
        for (int d = 0; d < n; ++d) off += (t.starts[d] + idx[d]) * stride[d];
        copies.push_back(off);
        int k = 0;
        for (; k < n; ++k) {  // odometer, fastest dimension first
          const int d = t.order_c ? n - 1 - k : k;
          if (++idx[d] < t.subsizes[d]) break;
          idx[d] = 0;
        }
        if (k == n) break;
      }
      break;
    }
    case Kind::kNamed:
      break;
  }
  for (long d : copies) AddCopies(t, d);

  long lb = 0, ub = 0;
  if (t.kind == Kind::kResized) {
    lb = t.resized_lb;
    ub = t.resized_lb + t.resized_extent;
  } else if (t.kind == Kind::kSubarray) {
    long total = ce;
    for (int s : t.sizes) total *= s;
    lb = 0;  // MPI-3.1 4.1.3: the full array, from 0
    ub = total;
  } else if (!copies.empty()) {
    lb = ub = copies[0] + c.lb;
    for (long d : copies) {
      lb = std::min(lb, d + c.lb);
      ub = std::max(ub, d + c.lb + ce);
    }
  }

  // The MPI type.
  std::vector<MPI_Aint> bytes(t.displs.size());
  for (size_t i = 0; i < t.displs.size(); ++i) bytes[i] = t.displs[i] * x;
  std::vector<int> idispl(t.displs.begin(), t.displs.end());
  switch (t.kind) {
    case Kind::kContiguous:
      MPI_Type_contiguous(t.count, c.mpi, &t.mpi);
      break;
    case Kind::kVector:
      MPI_Type_vector(t.count, t.blocklen, static_cast<int>(t.stride), c.mpi,
                      &t.mpi);
      break;
    case Kind::kHvector:
      MPI_Type_create_hvector(t.count, t.blocklen, t.stride * x, c.mpi, &t.mpi);
      break;
    case Kind::kIndexed:
      MPI_Type_indexed(static_cast<int>(idispl.size()), t.blocklens.data(),
                       idispl.data(), c.mpi, &t.mpi);
      break;
    case Kind::kIndexedBlock:
      MPI_Type_create_indexed_block(static_cast<int>(idispl.size()), t.blocklen,
                                    idispl.data(), c.mpi, &t.mpi);
      break;
    case Kind::kHindexed:
      MPI_Type_create_hindexed(static_cast<int>(bytes.size()),
                               t.blocklens.data(), bytes.data(), c.mpi, &t.mpi);
      break;
    case Kind::kHindexedBlock:
      MPI_Type_create_hindexed_block(static_cast<int>(bytes.size()), t.blocklen,
                                     bytes.data(), c.mpi, &t.mpi);
      break;
    case Kind::kStruct: {
      std::vector<MPI_Datatype> types(bytes.size(), c.mpi);
      MPI_Type_create_struct(static_cast<int>(bytes.size()), t.blocklens.data(),
                             bytes.data(), types.data(), &t.mpi);
      break;
    }
    case Kind::kResized:
      MPI_Type_create_resized(c.mpi, t.resized_lb * x, t.resized_extent * x,
                              &t.mpi);
      break;
    case Kind::kSubarray:
      MPI_Type_create_subarray(static_cast<int>(t.sizes.size()), t.sizes.data(),
                               t.subsizes.data(), t.starts.data(),
                               t.order_c ? MPI_ORDER_C : MPI_ORDER_FORTRAN,
                               c.mpi, &t.mpi);
      break;
    case Kind::kNamed:
      break;
  }
  MPI_Type_commit(&t.mpi);

  // Check the model against MPI.
  MPI_Aint mpi_lb, mpi_extent, true_lb, true_extent;
  MPI_Type_get_extent(t.mpi, &mpi_lb, &mpi_extent);
  if (t.kind == Kind::kStruct && mpi_lb % x == 0 && mpi_extent % x == 0) {
    lb = mpi_lb / x;  // MPI may pad a struct's extent for alignment
    ub = lb + mpi_extent / x;
  }
  if (mpi_lb != lb * x) ModelBug(t, "lb", lb * x, mpi_lb);
  if (mpi_extent != (ub - lb) * x)
    ModelBug(t, "extent", (ub - lb) * x, mpi_extent);
  t.lb = lb;
  t.extent = ub - lb;
  int size = 0, elem_size = 0;
  MPI_Type_size(t.mpi, &size);
  MPI_Type_size(e.type, &elem_size);
  if (size != static_cast<long>(t.map.size()) * elem_size) {
    ModelBug(t, "size", static_cast<long>(t.map.size()) * elem_size, size);
  }
  if (!t.map.empty()) {
    MPI_Aint elb, eext;
    MPI_Type_get_true_extent(e.type, &elb, &eext);
    MPI_Type_get_true_extent(t.mpi, &true_lb, &true_extent);
    const long lo = *std::min_element(t.map.begin(), t.map.end());
    const long hi = *std::max_element(t.map.begin(), t.map.end());
    if (true_lb != lo * x) ModelBug(t, "true lb", lo * x, true_lb);
    if (true_extent != (hi - lo) * x + eext) {
      ModelBug(t, "true extent", (hi - lo) * x + eext, true_extent);
    }
  }
}

// Divisors of n, ascending.
std::vector<int> Divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i) {
    if (n % i == 0) d.push_back(i);
  }
  return d;
}

// Splits `total` into `parts` non-negative block lengths; zero-length
// blocks only sometimes.
std::vector<int> Partition(int total, int parts, Rng& rng) {
  std::vector<int> cuts = {0, total};
  for (int i = 1; i < parts; ++i) cuts.push_back(rng.Range(0, total));
  std::sort(cuts.begin(), cuts.end());
  std::vector<int> lens;
  for (int i = 0; i < parts; ++i) lens.push_back(cuts[i + 1] - cuts[i]);
  if (!rng.Percent(15)) {  // usually no empty blocks: merge them away
    std::vector<int> nonzero;
    for (int l : lens) {
      if (l > 0) nonzero.push_back(l);
    }
    lens = nonzero;
  }
  return lens;
}

// Lays out blocks of the given lengths (in `unit`s per element) in
// increasing order with gaps, then sometimes permutes the blocks (the type
// map follows the listing order, not the addresses).
void Blocks(std::vector<int> lens, long unit, Rng& rng,
            std::vector<int>* out_lens, std::vector<long>* out_displs) {
  std::vector<long> displs;
  long at = rng.Below(3) * unit;
  for (int len : lens) {
    displs.push_back(at);
    at += (len + rng.Below(3)) * unit;
  }
  std::vector<size_t> order(lens.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (rng.Percent(30)) rng.Shuffle(order);
  out_lens->clear();
  out_displs->clear();
  for (size_t i : order) {
    out_lens->push_back(lens[i]);
    out_displs->push_back(displs[i]);
  }
}

TypeRef Child(int elem, int elements, long max_span, int depth, Rng& rng) {
  if (elements == 1 || depth <= 0 || rng.Percent(55)) {
    if (elements == 1) return NamedType(elem);
    auto t = std::make_shared<TypeNode>();
    t->kind = Kind::kContiguous;
    t->elem = elem;
    t->count = elements;
    t->child = NamedType(elem);
    Build(*t);
    return t;
  }
  return RandomType(elem, elements, max_span, depth, rng);
}

[[nodiscard]] TypeRef TryRandom(int elem, int k, long max_span, int depth,
                                Rng& rng) {
  auto t = std::make_shared<TypeNode>();
  t->elem = elem;
  const std::vector<int> divs = Divisors(k);
  // Elements per child copy.
  const int c = depth > 0 ? rng.Pick(divs) : 1;
  const int m = k / c;  // child copies
  t->child = Child(elem, c, max_span, depth - 1, rng);
  if (t->child == nullptr) return nullptr;
  const long ce = t->child->extent;
  const std::vector<int> mdivs = Divisors(m);
  const int pick = rng.Weighted({3, 4, 3, 3, 2, 2, 2, 3, 3, 3});
  switch (pick) {
    case 0:
      t->kind = Kind::kContiguous;
      t->count = m;
      break;
    case 1: {
      t->kind = Kind::kVector;
      t->blocklen = rng.Pick(mdivs);
      t->count = m / t->blocklen;
      t->stride = t->blocklen + rng.Below(3);
      if (rng.Percent(15)) t->stride = -t->stride;
      if (rng.Percent(5)) t->stride = rng.Below(t->blocklen + 1);  // overlaps
      break;
    }
    case 2: {
      t->kind = Kind::kHvector;
      t->blocklen = rng.Pick(mdivs);
      t->count = m / t->blocklen;
      t->stride = t->blocklen * ce + rng.Below(4);
      if (rng.Percent(15)) t->stride = -t->stride;
      break;
    }
    case 3:
    case 4: {
      t->kind = pick == 3 ? Kind::kIndexed : Kind::kHindexed;
      Blocks(Partition(m, rng.Range(1, std::min(m, 4)), rng),
             pick == 3 ? 1 : ce, rng, &t->blocklens, &t->displs);
      if (pick == 4 && rng.Percent(30)) {
        for (long& d : t->displs) d += rng.Below(2);  // off the child grid
      }
      break;
    }
    case 5:
    case 6: {
      t->kind = pick == 5 ? Kind::kIndexedBlock : Kind::kHindexedBlock;
      t->blocklen = rng.Pick(mdivs);
      std::vector<int> lens;
      Blocks(std::vector<int>(m / t->blocklen, t->blocklen), pick == 5 ? 1 : ce,
             rng, &lens, &t->displs);
      break;
    }
    case 7: {
      t->kind = Kind::kStruct;
      Blocks(Partition(m, rng.Range(1, std::min(m, 4)), rng), ce, rng,
             &t->blocklens, &t->displs);
      break;
    }
    case 8: {
      // A resized copy of a type with all k elements.
      t->kind = Kind::kResized;
      t->child = c == k ? t->child : Child(elem, k, max_span, depth - 1, rng);
      if (t->child == nullptr) return nullptr;
      const TypeNode& ch = *t->child;
      t->resized_lb = ch.lb - (rng.Percent(30) ? rng.Below(3) : 0);
      t->resized_extent = ch.extent + rng.Below(3);
      if (rng.Percent(10) && ch.extent > 1) t->resized_extent = ch.extent - 1;
      break;
    }
    default: {
      t->kind = Kind::kSubarray;
      const int ndims = rng.Range(2, 3);
      int rest = m;
      for (int d = 0; d < ndims; ++d) {
        const int s = d == ndims - 1 ? rest : rng.Pick(Divisors(rest));
        rest /= s;
        t->subsizes.push_back(s);
        t->sizes.push_back(s + rng.Below(3));
        t->starts.push_back(rng.Below(t->sizes.back() - s + 1));
      }
      t->order_c = rng.Percent(60);
      break;
    }
  }
  if (t->displs.empty() &&
      (t->kind == Kind::kIndexed || t->kind == Kind::kHindexed ||
       t->kind == Kind::kStruct)) {
    return nullptr;
  }
  Build(*t);
  if (t->map.size() != static_cast<size_t>(k)) return nullptr;
  const long lo = *std::min_element(t->map.begin(), t->map.end());
  const long hi = *std::max_element(t->map.begin(), t->map.end());
  if (hi - lo + 1 > max_span) return nullptr;
  return t;
}

}  // namespace

TypeNode::~TypeNode() {
  if (kind != Kind::kNamed && mpi != MPI_DATATYPE_NULL) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Type_free(&mpi);
  }
}

TypeRef NamedType(int elem) {
  auto t = std::make_shared<TypeNode>();
  t->elem = elem;
  Build(*t);
  return t;
}

TypeRef RandomType(int elem, int elements, long max_span, int depth, Rng& rng) {
  if (elements <= 0) return nullptr;
  if (elements == 1 && rng.Percent(60)) return NamedType(elem);
  for (int attempt = 0; attempt < 12; ++attempt) {
    if (TypeRef t = TryRandom(elem, elements, max_span, depth, rng)) return t;
  }
  return nullptr;
}

std::vector<long> Footprint(const TypeNode& t, int count) {
  std::vector<long> slots;
  slots.reserve(t.map.size() * count);
  for (int i = 0; i < count; ++i) {
    for (long s : t.map) slots.push_back(i * t.extent + s);
  }
  return slots;
}

bool Distinct(std::vector<long> slots) {
  std::sort(slots.begin(), slots.end());
  return std::adjacent_find(slots.begin(), slots.end()) == slots.end();
}

std::string Describe(const TypeNode& t) {
  const char* elem = Elem(t.elem).name;
  auto child = [&] { return Describe(*t.child); };
  auto ints = [](const auto& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) s += ",";
      s += std::to_string(v[i]);
    }
    return s + "]";
  };
  switch (t.kind) {
    case Kind::kNamed:
      return elem;
    case Kind::kContiguous:
      return "contig(" + std::to_string(t.count) + ", " + child() + ")";
    case Kind::kVector:
      return "vector(" + std::to_string(t.count) + "," +
             std::to_string(t.blocklen) + "," + std::to_string(t.stride) +
             ", " + child() + ")";
    case Kind::kHvector:
      return "hvector(" + std::to_string(t.count) + "," +
             std::to_string(t.blocklen) + "," + std::to_string(t.stride) +
             "slots, " + child() + ")";
    case Kind::kIndexed:
      return "indexed(" + ints(t.blocklens) + "," + ints(t.displs) + ", " +
             child() + ")";
    case Kind::kHindexed:
      return "hindexed(" + ints(t.blocklens) + "," + ints(t.displs) +
             "slots, " + child() + ")";
    case Kind::kIndexedBlock:
      return "indexed_block(" + std::to_string(t.blocklen) + "," +
             ints(t.displs) + ", " + child() + ")";
    case Kind::kHindexedBlock:
      return "hindexed_block(" + std::to_string(t.blocklen) + "," +
             ints(t.displs) + "slots, " + child() + ")";
    case Kind::kStruct:
      return "struct(" + ints(t.blocklens) + "," + ints(t.displs) + "slots, " +
             child() + ")";
    case Kind::kResized:
      return "resized(lb " + std::to_string(t.resized_lb) + ", extent " +
             std::to_string(t.resized_extent) + " slots, " + child() + ")";
    case Kind::kSubarray:
      return std::string("subarray(") + ints(t.sizes) + "," + ints(t.subsizes) +
             "," + ints(t.starts) + (t.order_c ? ",C, " : ",F, ") + child() +
             ")";
  }
  return "?";
}

}  // namespace rma_fuzz
