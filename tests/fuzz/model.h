// The fuzzer's oracle: what a generated program must leave in every
// window and fetch into every buffer, computed from MPI's semantics by a
// sequential model, with no MPI implementation involved. rma_fuzz checks
// every run against it (natively and under the shim alike), so a seed is
// judged by MPI's rules, not by agreement with native MPICH, at any rank
// count.
//
// Why a sequential model is exact here: the generator (generate.cc) gives
// every region of every target one mode per epoch (unit), and each mode
// makes the outcome independent of how the origins interleave: an owned
// region is touched by one origin, whose accesses MPI orders as issued
// where they overlap; a read-only region by nobody that writes; shared
// accumulates use one op whose result does not depend on the order (exact
// arithmetic); tickets and compare-and-swap of one value give one multiset
// of fetched values whatever the order; counters add their deltas under
// exclusive locks. Units (fence epochs) end with a synchronization that
// completes everything. So the model runs each unit's operations origin by
// origin, each origin's in program order, and records what the executor
// records (rma_fuzz.cc: RecordOp, FinalDigest).
#ifndef RMASHIM_TESTS_FUZZ_MODEL_H_
#define RMASHIM_TESTS_FUZZ_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tests/fuzz/program.h"

namespace rma_fuzz {

// A buffer laid out for `count` x type: `ptr` is where the type map starts.
struct Buffer {
  std::vector<std::byte> storage;
  std::byte* ptr = nullptr;
  std::vector<long> slots;  // the type map's slots, relative to storage
};

// The origin, result or compare buffer of an operation, filled with the
// values the seed gives it.
Buffer MakeBuffer(const TypedBuf& b, int elem, uint64_t seed, Values values);

// The buffer's bytes with element padding zeroed; with `holes_only`, the
// type map's own slots are zeroed too (what is left must be untouched).
std::vector<std::byte> Digestible(const Buffer& b, int elem, bool holes_only);

// Values every window starts with (`base`: world rank's window memory, of
// the size the spec gives); gaps between regions get a pattern.
void InitMemory(const Program& prog, int w, int world_rank, std::byte* base);

// The buffers an operation uses; the executor and the model make them alike.
struct OpBuffers {
  Buffer origin, result, compare;
};
OpBuffers MakeOpBuffers(const Op& op);

// The buffer whose contents RecordOp records for `op`, if it fetches.
const Buffer* FetchedBuffer(const Op& op, const OpBuffers& b);

// The bytes RecordOp digests for a fetching op (see Record).
std::vector<std::byte> Recorded(const Op& op, const Buffer& fetched);

// Key of a multiset entry (tickets, compare-and-swap of one value).
std::string MultisetKey(const Phase& p, const Op& op, int target_world);

// What the model predicts.
struct ModelOutcome {
  // [window][world rank]: final window memory, padding masked as the
  // executor's FinalDigest masks it.
  std::vector<std::vector<std::vector<std::byte>>> memory;
  // [phase index][world rank][op index in that rank's plan]: the recorded
  // bytes of each fetching op (empty for ops that do not fetch or were
  // filtered out).
  std::map<int, std::map<int, std::vector<std::vector<std::byte>>>> fetched;
  // Multiset key -> hex of every value fetched under it, sorted.
  std::map<std::string, std::vector<std::string>> multisets;
  // Operations each world rank runs.
  std::vector<int> ops_run;
};

ModelOutcome RunModel(const Program& prog, const Filter& filter);

std::string Hex(const std::vector<std::byte>& v);

}  // namespace rma_fuzz

#endif  // RMASHIM_TESTS_FUZZ_MODEL_H_
