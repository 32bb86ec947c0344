// Issue 12, finding 3 (vLLM #40004): under priority scheduling, a batch full by count
// (max_num_seqs) makes room for a more urgent waiting request by preempting a less urgent
// running one, each request at most max_displacements times. The live test is
// tests/server/live_scheduler_mix_test.cc (LivePriorityInversionTest).

#include <gtest/gtest.h>

#include "engine_driver.h"

namespace spillway {
namespace {

using enginetest::EngineDriver;

config::EngineSettings FourSlotsByPriority() {
  config::EngineSettings s;
  s.scheduling = "priority";
  s.max_num_seqs = 4;
  return s;
}

// Four class-10 streams fill the batch; a class-0 request arrives. Before: it waited until its
// queue-ingress deadline (about 1 s) and was dropped without a token.
TEST(PriorityInversionTest, AnUrgentRequestDisplacesALessUrgentStreamFromAFullBatch) {
  EngineDriver d(enginetest::Resolve(FourSlotsByPriority()));
  std::vector<RequestId> streams;
  for (int i = 0; i < 4; ++i) {
    streams.push_back(d.Offer(16, 200, /*priority=*/10));
  }
  d.RunUntil(0.3);
  ASSERT_EQ(d.engine().stats().num_running, 4);
  const RequestId urgent = d.Offer(16, 16, /*priority=*/0);
  ASSERT_TRUE(d.outcome(urgent).decision.admitted());
  d.RunToIdle(30);
  const auto& o = d.outcome(urgent);
  EXPECT_EQ(o.finish_reason, FinishReason::kLength);
  EXPECT_LT(o.ttft_s(), 0.1);
  // One stream made room (the latest of the least urgent), and every stream still finished.
  int displaced = 0;
  for (RequestId id : streams) {
    EXPECT_EQ(d.outcome(id).finish_reason, FinishReason::kLength);
    displaced += d.outcome(id).num_displacements;
  }
  EXPECT_EQ(displaced, 1);
  EXPECT_EQ(d.outcome(streams.back()).num_displacements, 1);
}

// A steady flow of urgent requests cannot displace one stream for ever: at most
// max_displacements (2) times each, and the streams finish.
TEST(PriorityInversionTest, DisplacementsPerRequestAreBounded) {
  EngineDriver d(enginetest::Resolve(FourSlotsByPriority()));
  std::vector<RequestId> streams;
  for (int i = 0; i < 4; ++i) {
    streams.push_back(d.Offer(16, 200, /*priority=*/10));
  }
  for (int k = 0; k < 60; ++k) {
    d.RunUntil(0.2 + 0.05 * k);
    d.Offer(16, 4, /*priority=*/0);
  }
  d.RunToIdle(60);
  for (RequestId id : streams) {
    EXPECT_LE(d.outcome(id).num_displacements, 2);
    EXPECT_EQ(d.outcome(id).finish_reason, FinishReason::kLength) << id;
  }
}

// A request of the same class never displaces (FCFS within a class), nor does an urgent one
// under FCFS scheduling.
TEST(PriorityInversionTest, NoDisplacementWithinAClassOrUnderFcfs) {
  for (const char* scheduling : {"priority", "fcfs"}) {
    config::EngineSettings s = FourSlotsByPriority();
    s.scheduling = scheduling;
    EngineDriver d(enginetest::Resolve(s));
    for (int i = 0; i < 4; ++i) {
      d.Offer(16, 200, std::string(scheduling) == "fcfs" ? 10 : 0);
    }
    d.RunUntil(0.3);
    d.Offer(16, 16, 0);
    d.RunToIdle(30);
    for (const auto& [id, o] : d.outcomes()) {
      EXPECT_EQ(o.num_displacements, 0) << scheduling;
    }
  }
}

}  // namespace
}  // namespace spillway
