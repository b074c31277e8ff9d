// The word lane: MPI_Fetch_and_op, MPI_Compare_and_swap and MPI_Accumulate
// of one 8-byte integer (and MPI_Accumulate's MPI_SUM of one double) on a
// plain window. These are the shapes counters, GUPS, queues, mutexes and
// histogram updates use, and their CPU floor is one locked instruction:
// every instruction the shim adds around it costs time the locked
// instruction cannot hide, past the first few dozen (bench/small_ops
// measures the lane against that floor). So the lane does the fast path's
// checks (access.h: DirectWord) and the unstriped protocol (word_atomics.h)
// with the CPU atomic inline: no element-op table, no indirect call, no profile
// test. Everything else (other types and ops, exclusive locks, targets whose
// mode word asks for stripes) takes accumulate.h's paths, which apply the same
// protocol, so both lanes agree on every element.
#ifndef RMASHIM_SHIM_MOVE_WORD_LANE_H_
#define RMASHIM_SHIM_MOVE_WORD_LANE_H_

#include <mpi.h>

#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>

#include "shim/base/mpich_abi.h"
#include "shim/move/access.h"
#include "shim/sync/word_atomics.h"
#include "shim/windows/window.h"

namespace rmashim {

// Where the lane may touch the target word: a window rank of a plain
// window where this process announces in unstriped slots of its own
// (ManagedWindow::LaneRank: every Target::own_slot set), which it may access
// directly in a lock_all or fence epoch or under a shared lock (under an
// exclusive one accumulate.h updates with plain loads and stores; PSCW
// epochs wait for posts), and an aligned word inside its memory. DirectWord's
// checks, with the epoch looked at once. False: take the other paths.
[[gnu::always_inline]] inline bool WordLaneTarget(const ManagedWindow& w,
                                                  int target, MPI_Aint disp,
                                                  uint64_t** word) {
  if (!w.LaneRank(target) || disp < 0) [[unlikely]] {
    return false;
  }
  const AccessEpoch epoch = w.epoch();
  if (!GivesEveryTarget(epoch)) [[unlikely]] {
    if (epoch != AccessEpoch::kLock ||
        w.lock_state(target).mode != LockMode::kShared) {
      return false;
    }
  }
  const Target& t = w.target(target);
  MPI_Aint offset;  // direct_size -1 (not mapped here) fails the test
  if (__builtin_mul_overflow(disp, static_cast<MPI_Aint>(t.disp_unit),
                             &offset) ||
      offset > t.direct_size - 8 ||
      ((reinterpret_cast<uintptr_t>(t.base) + offset) & 7) != 0) [[unlikely]] {
    return false;
  }
  *word = reinterpret_cast<uint64_t*>(t.base + offset);
  return true;
}

inline uint64_t LoadWord(const void* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// The target's mode word asked for stripes: the update goes through
// ApplyRun / ApplyCompareSwap as the other lanes' would. Out of line.
[[gnu::noinline]] void WordLaneStriped(const ManagedWindow& w, int target,
                                       uint64_t* word, MPI_Datatype type,
                                       MPI_Op op, const void* origin,
                                       const void* compare, void* result);

// How a lane is compiled: inlined into the wrapper (kInline) or in the
// wrappers' out-of-line path (kOutOfLine). Both serve a target whose mode
// word asks for stripes through the stripes; the inline one keeps only
// what that needs alive past its checks (see WordLaneStripedAfterAttempt).
// kDecline, inlined too, declines such a target instead (having changed
// nothing), so its wrapper's every miss is one jump to its other path.
enum class LaneMiss { kInline, kOutOfLine, kDecline };

// The inline lane's attempt found the target's mode word asking for
// stripes: the streak of the mode word counted, then the update through
// the stripes (WordLaneStriped). Out of line, with the op and the type
// fixed by the lane (MPI_UINT64_T for every integer lane: SUM, REPLACE,
// NO_OP, the bitwise ops and compare-and-swap do the same to every 8-byte
// integer type, signed or not), so the wrapper's other arguments are dead
// once its checks passed.
[[gnu::noinline]] void WordLaneStripedAfterAttempt(
    const ManagedWindow& w, int target, uint64_t* word, MPI_Datatype type,
    MPI_Op op, const void* origin, const void* compare, void* result);

// A word lane call, once its arguments passed: the word it may touch
// (WordLaneTarget), then `update` announced and unstriped while the
// target's mode word allows, else through the stripes as `type` and `op`
// (the lane's, which apply to the caller's type alike). True when done.
template <LaneMiss miss, typename Update>
[[gnu::always_inline]] inline bool RunWordLane(const ManagedWindow& w,
                                               int target, MPI_Aint disp,
                                               MPI_Datatype type, MPI_Op op,
                                               const void* origin,
                                               const void* compare,
                                               void* result, Update&& update) {
  uint64_t* word;
  if (!WordLaneTarget(w, target, disp, &word)) [[unlikely]]
    return false;
  const Target& t = w.target(target);
  auto run = [&] [[gnu::always_inline]] { update(word); };
  if constexpr (miss == LaneMiss::kDecline) {
    return TryUnstriped(t.header->word_mode, *t.own_slot, run);
  } else if constexpr (miss == LaneMiss::kInline) {
    if (!TryUnstriped(t.header->word_mode, *t.own_slot, run)) [[unlikely]] {
      WordLaneStripedAfterAttempt(w, target, word, type, op, origin, compare,
                                  result);
    }
  } else {
    if (!RunUnstriped(t.header->word_mode, *t.own_slot, run)) [[unlikely]] {
      WordLaneStriped(w, target, word, type, op, origin, compare, result);
    }
  }
  return true;
}

// MPI_Fetch_and_op of MPI_SUM, MPI_REPLACE or MPI_NO_OP on one 8-byte
// integer. True when done. One lane per op, MPI_SUM straight through: the
// op is tested once.
template <LaneMiss miss = LaneMiss::kOutOfLine>
[[nodiscard]] [[gnu::always_inline]] inline bool TryWordFetchAndOp(
    ManagedWindow& w, MPI_Datatype type, MPI_Op op, int target, MPI_Aint disp,
    const void* origin, void* result) {
  if (!IsWordIntegerType(type) || result == nullptr) [[unlikely]] {
    return false;
  }
  auto lane = [&] [[gnu::always_inline]] (auto fetch) {
    return RunWordLane<miss>(
        w, target, disp, MPI_UINT64_T, op, origin, nullptr, result,
        [&] [[gnu::always_inline]] (uint64_t * word) {
          const uint64_t old = fetch(std::atomic_ref<uint64_t>(*word));
          std::memcpy(result, &old, 8);
        });
  };
  if (op != MPI_SUM || origin == nullptr) [[unlikely]] {  // SUM runs through
    if (op == MPI_REPLACE && origin != nullptr) {
      return lane([&](std::atomic_ref<uint64_t> ref) {
        return ref.exchange(LoadWord(origin));
      });
    }
    if (op == MPI_NO_OP) {
      return lane([](std::atomic_ref<uint64_t> ref) { return ref.load(); });
    }
    return false;
  }
  return lane([&](std::atomic_ref<uint64_t> ref) {
    return ref.fetch_add(LoadWord(origin));
  });
}

// MPI_Compare_and_swap of one 8-byte integer. True when done.
template <LaneMiss miss = LaneMiss::kOutOfLine>
[[nodiscard]] [[gnu::always_inline]] inline bool TryWordCompareAndSwap(
    ManagedWindow& w, MPI_Datatype type, int target, MPI_Aint disp,
    const void* origin, const void* compare, void* result) {
  if (!IsWordIntegerType(type) || origin == nullptr || compare == nullptr ||
      result == nullptr) [[unlikely]] {
    return false;
  }
  return RunWordLane<miss>(
      w, target, disp, MPI_UINT64_T, MPI_OP_NULL, origin, compare, result,
      [&] [[gnu::always_inline]] (uint64_t * word) {
        uint64_t expected = LoadWord(compare);
        std::atomic_ref<uint64_t>(*word).compare_exchange_strong(
            expected, LoadWord(origin));
        std::memcpy(result, &expected, 8);  // the old value
      });
}

// MPI_Accumulate of one element: MPI_SUM, MPI_BXOR, MPI_BOR or MPI_BAND
// on an 8-byte integer (one locked instruction), or MPI_SUM on MPI_DOUBLE
// (a compare-and-swap loop, as the element kernels do it). True when done.
template <LaneMiss miss = LaneMiss::kOutOfLine>
[[nodiscard]] [[gnu::always_inline]] inline bool TryWordAccumulate(
    ManagedWindow& w, MPI_Datatype type, MPI_Op op, int target, MPI_Aint disp,
    const void* origin) {
  if (origin == nullptr) [[unlikely]]
    return false;
  auto lane = [&] [[gnu::always_inline]] (MPI_Datatype lane_type,
                                          MPI_Op lane_op, auto update) {
    return RunWordLane<miss>(w, target, disp, lane_type, lane_op, origin,
                             nullptr, nullptr,
                             [&] [[gnu::always_inline]] (uint64_t * word) {
                               update(std::atomic_ref<uint64_t>(*word));
                             });
  };
  // MPI_DOUBLE runs through (one compare, tested before the integers;
  // the commonest accumulate of numerical codes), the integers aside.
  if (type == MPI_DOUBLE) [[likely]] {
    if (op != MPI_SUM) return false;
    return lane(MPI_DOUBLE, MPI_SUM, [&](std::atomic_ref<uint64_t> ref) {
      const double x = std::bit_cast<double>(LoadWord(origin));
      uint64_t old = ref.load(std::memory_order_relaxed);
      while (!ref.compare_exchange_weak(
          old, std::bit_cast<uint64_t>(std::bit_cast<double>(old) + x))) {
      }
    });
  }
  if (IsWordIntegerType(type)) {
    // One locked instruction each (its old value unused).
    auto rmw = [&] [[gnu::always_inline]] (MPI_Op lane_op, auto apply) {
      return lane(MPI_UINT64_T, lane_op, [&](std::atomic_ref<uint64_t> ref) {
        apply(ref, LoadWord(origin));
      });
    };
    using Ref = std::atomic_ref<uint64_t>;
    switch (op) {
      case MPI_SUM:
        return rmw(MPI_SUM, [](Ref r, uint64_t v) { r.fetch_add(v); });
      case MPI_BXOR:
        return rmw(MPI_BXOR, [](Ref r, uint64_t v) { r.fetch_xor(v); });
      case MPI_BOR:
        return rmw(MPI_BOR, [](Ref r, uint64_t v) { r.fetch_or(v); });
      case MPI_BAND:
        return rmw(MPI_BAND, [](Ref r, uint64_t v) { r.fetch_and(v); });
      default:
        return false;
    }
  }
  return false;
}

}  // namespace rmashim

#endif  // RMASHIM_SHIM_MOVE_WORD_LANE_H_
