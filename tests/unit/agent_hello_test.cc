// Which connections an agent takes (shim/agent/agent_link.h: HelloAccepted):
// this job's token, an origin among the job's ranks, and this agent meant,
// so an origin that an address every host has led to another agent of the
// same job on the same port number is refused there.
#include <gtest/gtest.h>

#include "shim/agent/agent_link.h"

namespace rmashim {
namespace {

constexpr uint64_t kToken = 0x1234'5678'9abc'def0u;
constexpr int kSelf = 3;
constexpr size_t kWorld = 8;

TEST(AgentHelloTest, TakesThisJobsOriginMeaningThisAgent) {
  EXPECT_TRUE(HelloAccepted({kToken, 0, kSelf}, kToken, kSelf, kWorld));
  EXPECT_TRUE(HelloAccepted({kToken, 7, kSelf}, kToken, kSelf, kWorld));
  EXPECT_TRUE(HelloAccepted({kToken, kSelf, kSelf}, kToken, kSelf, kWorld));
}

TEST(AgentHelloTest, RefusesAnOriginThatMeantAnotherAgent) {
  // The same job and port on another host: the origin meant rank 5.
  EXPECT_FALSE(HelloAccepted({kToken, 0, 5}, kToken, kSelf, kWorld));
  EXPECT_FALSE(HelloAccepted({kToken, 0, -1}, kToken, kSelf, kWorld));
}

TEST(AgentHelloTest, RefusesOtherJobsAndRanksOutsideTheJob) {
  EXPECT_FALSE(HelloAccepted({kToken + 1, 0, kSelf}, kToken, kSelf, kWorld));
  EXPECT_FALSE(HelloAccepted({kToken, -1, kSelf}, kToken, kSelf, kWorld));
  EXPECT_FALSE(HelloAccepted({kToken, 8, kSelf}, kToken, kSelf, kWorld));
}

}  // namespace
}  // namespace rmashim
