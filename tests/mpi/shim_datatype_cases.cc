// The datatypes of every case of shim_datatype_cases.h and the model.
#include "tests/mpi/shim_datatype_cases.h"

#include <iterator>

namespace rmashim_test::datatype {
namespace {

MPI_Datatype Commit(MPI_Datatype t) {
  MPI_Type_commit(&t);
  return t;
}

MPI_Datatype Vector(int count, int block, int stride, MPI_Datatype old) {
  MPI_Datatype t;
  MPI_Type_vector(count, block, stride, old, &t);
  return Commit(t);
}

MPI_Datatype Resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent) {
  MPI_Datatype t;
  MPI_Type_create_resized(old, lb, extent, &t);
  return Commit(t);
}

bool IsPredefined(MPI_Datatype type) {
  int ints = 0, addrs = 0, types = 0, combiner = 0;
  MPI_Type_get_envelope(type, &ints, &addrs, &types, &combiner);
  return combiner == MPI_COMBINER_NAMED;
}

// A derived type built from `inner`, which is freed (the new type keeps
// what it needs).
template <typename Build>
MPI_Datatype Wrap(MPI_Datatype inner, Build build) {
  MPI_Datatype t = build(inner);
  FreeType(inner);
  return t;
}

Side Ints(int n) { return {MPI_INT, n, 8}; }

// An {int, int, double, int} record at the given byte displacements.
MPI_Datatype MixedStruct(MPI_Aint ints_at, MPI_Aint double_at,
                         MPI_Aint int_at) {
  const int blocks[] = {2, 1, 1};
  const MPI_Aint displs[] = {ints_at, double_at, int_at};
  const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_INT};
  MPI_Datatype t;
  MPI_Type_create_struct(3, blocks, displs, types, &t);
  return Commit(t);
}

}  // namespace

void FreeType(MPI_Datatype type) {
  if (!IsPredefined(type)) MPI_Type_free(&type);
}

// One line per side reads better than what clang-format makes of it.
// clang-format off
const Case kCases[] = {
    {"ContiguousBoth", [] { return Ints(8); },
     [] { return Side{MPI_INT, 8, 4}; }},
    {"VectorTarget", [] { return Ints(8); },
     [] { return Side{Vector(4, 2, 5, MPI_INT), 1, 0}; }},
    {"VectorOrigin", [] { return Side{Vector(4, 2, 3, MPI_INT), 1, 4}; },
     [] { return Side{MPI_INT, 8, 12}; }},
    {"VectorBothCountTwo",
     [] { return Side{Vector(2, 3, 4, MPI_INT), 2, 0}; },
     [] { return Side{Vector(3, 2, 5, MPI_INT), 2, 4}; }},
    {"HvectorTarget", [] { return Ints(6); },
     [] {
       MPI_Datatype t;
       MPI_Type_create_hvector(3, 2, 20, MPI_INT, &t);
       return Side{Commit(t), 1, 0};
     }},
    {"IndexedTargetVectorOrigin",
     [] { return Side{Vector(3, 3, 4, MPI_INT), 1, 0}; },
     [] {
       const int blocks[] = {2, 3, 4}, displs[] = {0, 5, 12};
       MPI_Datatype t;
       MPI_Type_indexed(3, blocks, displs, MPI_INT, &t);
       return Side{Commit(t), 1, 4};
     }},
    {"IndexedBlockUnsorted", [] { return Ints(8); },
     [] {
       const int displs[] = {9, 0, 6, 3};  // type-map order, not address order
       MPI_Datatype t;
       MPI_Type_create_indexed_block(4, 2, displs, MPI_INT, &t);
       return Side{Commit(t), 1, 0};
     }},
    {"HindexedNegativeDisplacement", [] { return Ints(4); },
     [] {
       const int blocks[] = {2, 2};
       const MPI_Aint displs[] = {8, -8};
       MPI_Datatype t;
       MPI_Type_create_hindexed(2, blocks, displs, MPI_INT, &t);
       return Side{Commit(t), 1, 16};  // touches region bytes [8, 32)
     }},
    {"StructOfIntsTarget", [] { return Ints(4); },
     [] {
       const int blocks[] = {1, 2, 1};
       const MPI_Aint displs[] = {0, 12, 28};
       const MPI_Datatype types[] = {MPI_INT, MPI_INT, MPI_INT};
       MPI_Datatype t;
       MPI_Type_create_struct(3, blocks, displs, types, &t);
       return Side{Commit(t), 1, 0};
     }},
    {"StructMixedBothCountTwo",
     [] { return Side{MixedStruct(0, 8, 16), 2, 0}; },
     [] { return Side{MixedStruct(4, 16, 32), 2, 8}; }},
    {"ResizedExtentBeyondSizeTarget", [] { return Ints(5); },
     [] { return Side{Resized(MPI_INT, 0, 12), 5, 4}; }},
    {"ResizedBoth", [] { return Side{Resized(MPI_INT, 0, 8), 6, 0}; },
     [] { return Side{Resized(MPI_INT, 0, 20), 6, 0}; }},
    {"ResizedNegativeLowerBound", [] { return Ints(6); },
     [] {
       return Side{Wrap(Vector(2, 1, 3, MPI_INT),
                        [](MPI_Datatype v) { return Resized(v, -4, 20); }),
                   3, 4};
     }},
    {"SubarrayTarget", [] { return Ints(12); },
     [] {
       const int sizes[] = {6, 8}, subsizes[] = {3, 4}, starts[] = {1, 2};
       MPI_Datatype t;
       MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C,
                                MPI_INT, &t);
       return Side{Commit(t), 1, 0};
     }},
    {"SubarrayFortranOrderOrigin",
     [] {
       const int sizes[] = {5, 6}, subsizes[] = {2, 3}, starts[] = {2, 1};
       MPI_Datatype t;
       MPI_Type_create_subarray(2, sizes, subsizes, starts,
                                MPI_ORDER_FORTRAN, MPI_INT, &t);
       return Side{Commit(t), 1, 0};
     },
     [] { return Side{MPI_INT, 6, 20}; }},
    {"ContiguousOfVectorTarget", [] { return Ints(8); },
     [] {
       return Side{Wrap(Vector(2, 2, 3, MPI_INT),
                        [](MPI_Datatype v) {
                          MPI_Datatype t;
                          MPI_Type_contiguous(2, v, &t);
                          return Commit(t);
                        }),
                   1, 0};
     }},
    {"DerivedButDenseBoth",
     [] {
       MPI_Datatype t;
       MPI_Type_contiguous(6, MPI_INT, &t);
       return Side{Commit(t), 1, 0};
     },
     [] {
       MPI_Datatype t;
       MPI_Type_contiguous(3, MPI_INT, &t);
       return Side{Commit(t), 2, 4};
     }},
    {"DoublesIntoStridedDoubles", [] { return Side{MPI_DOUBLE, 3, 0}; },
     [] { return Side{Vector(3, 1, 2, MPI_DOUBLE), 1, 8}; }},
    // More separate blocks than one process_vm_writev/readv call takes
    // (IOV_MAX is 1024).
    {"VectorOfMoreBlocksThanIovMax", [] { return Ints(1100); },
     [] { return Side{Vector(1100, 1, 3, MPI_INT), 1, 4}; }},
    {"ZeroCount", [] { return Side{Vector(2, 1, 2, MPI_INT), 0, 0}; },
     [] { return Side{MPI_INT, 0, 0}; }},
};
// clang-format on

const int kNumCases = int(std::size(kCases));

CaseTypes::CaseTypes() {
  for (const Case& c : kCases) {
    origin.push_back(c.origin());
    target.push_back(c.target());
  }
}

CaseTypes::~CaseTypes() {
  for (const Side& s : origin) FreeType(s.type);
  for (const Side& s : target) FreeType(s.type);
}

void ModelCopy(const std::byte* src, const Side& from, std::byte* dst,
               const Side& to) {
  int bytes = 0;
  MPI_Pack_size(from.count, from.type, MPI_COMM_SELF, &bytes);
  std::vector<char> packed(bytes + 1);
  int position = 0;
  MPI_Pack(src + from.offset, from.count, from.type, packed.data(), bytes,
           &position, MPI_COMM_SELF);
  const int used = position;
  position = 0;
  MPI_Unpack(packed.data(), used, &position, dst + to.offset, to.count, to.type,
             MPI_COMM_SELF);
}

std::pair<MPI_Aint, MPI_Aint> Span(const Side& side) {
  if (side.count == 0) return {side.offset, side.offset};
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPI_Type_get_extent(side.type, &lb, &extent);
  MPI_Type_get_true_extent(side.type, &true_lb, &true_extent);
  const MPI_Aint lo = side.offset + true_lb;
  return {lo, lo + (side.count - 1) * extent + true_extent};
}

}  // namespace rmashim_test::datatype
