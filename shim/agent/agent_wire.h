// The agent's requests as they travel (agent.h, "Protocol"): a batch is
// frames, each a 4-byte length and that many bytes; a frame is a
// RequestHeader, then its kind's body. An update's body is its target
// element runs ({offset in bytes from the displacement, count}, two
// MPI_Aint each: flatten.h's ElementRun) and then the packed origin
// elements (none for MPI_NO_OP); a compare-and-swap's is the origin
// element, then the compare element. Shared by the agent's files and by
// the tests that forge requests (tests/mpi/shim_agent_forged_request_test.cc);
// nothing else of the shim.
#ifndef RMASHIM_SHIM_AGENT_AGENT_WIRE_H_
#define RMASHIM_SHIM_AGENT_AGENT_WIRE_H_

#include <mpi.h>

#include <cstdint>

namespace rmashim {

enum class AgentLockKind : int32_t { kShared = 1, kExclusive = 2, kAll = 3 };

enum class RequestKind : uint32_t {
  kUpdate,       // accumulate family: runs, then origin elements
  kCompareSwap,  // one element: origin, then compare
  kFlush,        // answered once everything before it is applied
  kLock,         // answered once granted (agent_locks.h)
  kUnlock,       // answered once released
};

// The fixed part of every request; runs (ElementRun) and data follow.
struct RequestHeader {
  RequestKind kind = RequestKind::kFlush;
  int32_t window = -1;  // the target's agent id for the window
  int64_t disp = 0;     // in the target's displacement units
  MPI_Datatype element = MPI_DATATYPE_NULL;  // predefined: same everywhere
  MPI_Op op = MPI_OP_NULL;  // predefined; MPI_NO_OP: no origin data
  int64_t elements = 0;
  int64_t element_size = 0;
  int64_t runs = 0;
  int32_t fetching = 0;  // 1: reply with the old values
  int32_t counted = 0;   // 1: issued in a fence or PSCW epoch, so counted
                         // where sent and where applied (AgentFenceCounts)
  AgentLockKind lock = AgentLockKind::kShared;  // kLock, kUnlock; their
                                                // target's rank is `disp`
};
static_assert(sizeof(MPI_Datatype) == sizeof(int32_t) &&
              sizeof(MPI_Op) == sizeof(int32_t));

}  // namespace rmashim

#endif  // RMASHIM_SHIM_AGENT_AGENT_WIRE_H_
