// Requests an agent must not apply (shim/agent/agent_serve.cc's checks and
// the transport's, shim/agent/agent_transport.h): rank 0 sends a remote
// target's agent forged batches (rmashim_agent_send_forged, in the format
// of shim/agent/agent_wire.h) with another job's token, from no rank of the
// job, for a window id of no live window or of a freed generation, outside
// the target's memory, with an operation or element size the window does
// not allow, with more runs than the body holds, and with a frame cut
// short. None may change the target's memory; each refused one is counted
// at the target (rmashim_agent_rejected: exactly as many as were refused);
// the origin's next flush reports the refusals it sent as itself
// (MPI_ERR_OTHER), the one after succeeds, and the agent goes on serving:
// a well-formed forged update, as a control, and the origin's real
// accumulates are applied exactly once.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "shim/agent/agent_wire.h"
#include "tests/mpi_test_util.h"

namespace {

using rmashim::RequestHeader;
using rmashim::RequestKind;
using rmashim_test::AgentRejected;
using rmashim_test::AgentWindowId;
using rmashim_test::HangWatchdog;
using rmashim_test::NodeLocalRanks;
using rmashim_test::Rank;
using rmashim_test::ReadAgentStats;
using rmashim_test::SendForgedToAgent;
using rmashim_test::Size;

constexpr int kOrigin = 0;
constexpr double kWatchdogSeconds = 60;
constexpr int kSlots = 4;  // int64_t counters in the target's window

struct Run {
  MPI_Aint offset;
  MPI_Aint count;
};

// One update frame: MPI_SUM of `value` into element `slot` of window `id`,
// with its header's fields as `edit` leaves them.
template <typename Edit>
std::vector<std::byte> UpdateFrame(int id, int64_t slot, int64_t value,
                                   Edit edit) {
  RequestHeader h{.kind = RequestKind::kUpdate,
                  .window = id,
                  .disp = slot,
                  .element = MPI_INT64_T,
                  .op = MPI_SUM,
                  .elements = 1,
                  .element_size = sizeof(int64_t),
                  .runs = 1};
  edit(h);
  const Run run{0, 1};
  const uint32_t length = sizeof h + sizeof run + sizeof value;
  std::vector<std::byte> frame(sizeof length + length);
  std::byte* at = frame.data();
  std::memcpy(at, &length, sizeof length);
  std::memcpy(at += sizeof length, &h, sizeof h);
  std::memcpy(at += sizeof h, &run, sizeof run);
  std::memcpy(at + sizeof run, &value, sizeof value);
  return frame;
}

std::vector<std::byte> UpdateFrame(int id, int64_t slot, int64_t value) {
  return UpdateFrame(id, slot, value, [](RequestHeader&) {});
}

TEST(AgentForgedRequestTest, RefusedRequestsChangeNothingAndServingGoesOn) {
  ASSERT_TRUE(ReadAgentStats().running) << "RMASHIM_AGENT=1 on a split";
  const std::vector<bool> local = NodeLocalRanks();
  int target = -1;
  if (Rank() == kOrigin) {
    for (int r = 0; r < Size(); ++r) {
      if (!local[r]) target = r;
    }
  }
  MPI_Bcast(&target, 1, MPI_INT, kOrigin, MPI_COMM_WORLD);
  ASSERT_GE(target, 0) << "needs ranks on two nodes";

  int64_t* mem = nullptr;
  MPI_Win win;
  ASSERT_EQ(MPI_Win_allocate(kSlots * sizeof(int64_t), sizeof(int64_t),
                             MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win),
            MPI_SUCCESS);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  for (int i = 0; i < kSlots; ++i) mem[i] = 0;
  const long long rejected_before = AgentRejected();
  MPI_Barrier(MPI_COMM_WORLD);

  int refused = 0;  // by the target: its count must rise by exactly this
  if (Rank() == kOrigin) {
    HangWatchdog watchdog(kWatchdogSeconds, "the forged requests");
    const int id = AgentWindowId(win, target);
    ASSERT_GE(id, 0) << "the window is not the agent's";
    ASSERT_EQ(MPI_Win_lock_all(0, win), MPI_SUCCESS);
    const auto forge = [&](const std::vector<std::byte>& frames,
                           int claimed = kOrigin,
                           unsigned long long token_xor = 0) {
      EXPECT_EQ(SendForgedToAgent(target, claimed, token_xor, frames.data(),
                                  frames.size()),
                MPI_SUCCESS);
    };
    // The control: well formed, applied.
    forge(UpdateFrame(id, 0, 1));
    // Dropped by the transport: another job's token; no rank of this job.
    forge(UpdateFrame(id, 1, 100), kOrigin, 0x5a5a);
    forge(UpdateFrame(id, 1, 100), Size() + 7);
    forge(UpdateFrame(id, 1, 100), -3);
    refused += 3;
    // No live window, or a freed generation of this one's slot: dropped
    // as updates for a freed window are (served_windows.h), not applied.
    forge(UpdateFrame(id + 1000, 1, 100));
    forge(UpdateFrame(id ^ (1 << 14), 1, 100));
    // Refused by the agent's checks.
    forge(UpdateFrame(id, kSlots, 100));  // past the window's end
    forge(UpdateFrame(id, -1, 100));
    forge(
        UpdateFrame(id, 1, 100, [](RequestHeader& h) { h.op = MPI_OP_NULL; }));
    forge(UpdateFrame(id, 1, 100, [](RequestHeader& h) {
      h.element_size = 4;  // not MPI_INT64_T's
    }));
    forge(UpdateFrame(id, 1, 100, [](RequestHeader& h) { h.runs = 1 << 20; }));
    forge(UpdateFrame(id, 1, 100, [](RequestHeader& h) { h.elements = 2; }));
    forge(UpdateFrame(id, 1, 100, [](RequestHeader& h) {
      h.kind = static_cast<RequestKind>(77);
    }));
    std::vector<std::byte> cut = UpdateFrame(id, 1, 100);
    cut.resize(cut.size() - 3);  // its length says more than came
    forge(cut);
    refused += 8;
    // The origin's own accumulate after them; its flush reports the
    // refusals, the next one does not.
    const int64_t one = 1;
    EXPECT_EQ(MPI_Accumulate(&one, 1, MPI_INT64_T, target, 2, 1, MPI_INT64_T,
                             MPI_SUM, win),
              MPI_SUCCESS);
    int error_class = MPI_SUCCESS;
    MPI_Error_class(MPI_Win_flush(target, win), &error_class);
    EXPECT_EQ(error_class, MPI_ERR_OTHER) << "the refusals went unreported";
    EXPECT_EQ(MPI_Accumulate(&one, 1, MPI_INT64_T, target, 2, 1, MPI_INT64_T,
                             MPI_SUM, win),
              MPI_SUCCESS);
    EXPECT_EQ(MPI_Win_flush(target, win), MPI_SUCCESS);
    EXPECT_EQ(MPI_Win_unlock_all(win), MPI_SUCCESS);
  }
  MPI_Bcast(&refused, 1, MPI_INT, kOrigin, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (Rank() == target) {
    MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
    EXPECT_EQ(mem[0], 1) << "the control update";
    EXPECT_EQ(mem[1], 0) << "a forged update was applied";
    EXPECT_EQ(mem[2], 2) << "the origin's own accumulates";
    EXPECT_EQ(mem[3], 0);
    MPI_Win_unlock(target, win);
    EXPECT_EQ(AgentRejected() - rejected_before, refused);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_EQ(MPI_Win_free(&win), MPI_SUCCESS);
}

}  // namespace
