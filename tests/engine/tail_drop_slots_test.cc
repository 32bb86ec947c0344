// Issue 12, finding 7: tail-drop's queue limit (max_num_queued_reqs) counts the requests that
// wait for completions, not those the batch's free slots take at the next step. The live test
// is tests/server/live_scheduler_mix_test.cc (LiveTailDropTest).

#include <gtest/gtest.h>

#include "engine_driver.h"

namespace spillway {
namespace {

using enginetest::EngineDriver;

config::EngineSettings TailDrop(std::int64_t seqs, std::int64_t queued) {
  config::EngineSettings s;
  s.policy = "tail-drop";
  s.max_num_seqs = seqs;
  s.max_num_queued_reqs = queued;
  return s;
}

TEST(TailDropSlotsTest, ABurstWithinOneStepFillsTheFreeSlotsThenTheQueue) {
  // Four free slots and a queue of ten: twenty requests at once, fourteen admitted (before the
  // fix: ten, the four that start at the next step counted as queued).
  EngineDriver d(enginetest::Resolve(TailDrop(4, 10)));
  int admitted = 0;
  int queue_full = 0;
  for (int i = 0; i < 20; ++i) {
    const RequestId id = d.Offer(8, 100);
    admitted += d.outcome(id).decision.admitted();
    queue_full += d.outcome(id).decision.reason == OverloadReason::kQueueFull;
  }
  EXPECT_EQ(admitted, 14);
  EXPECT_EQ(queue_full, 6);
  d.RunUntil(0.05);  // four start; the queue holds ten beyond a full batch
  EXPECT_EQ(d.engine().stats().num_running, 4);
  EXPECT_EQ(d.engine().stats().num_waiting, 10);
  EXPECT_FALSE(d.outcome(d.Offer(8, 100)).decision.admitted());
}

TEST(TailDropSlotsTest, ARunningBatchLeavesOnlyItsFreeSlots) {
  EngineDriver d(enginetest::Resolve(TailDrop(4, 10)));
  d.Offer(8, 1000);
  d.Offer(8, 1000);
  d.RunUntil(0.05);
  ASSERT_EQ(d.engine().stats().num_running, 2);
  int admitted = 0;
  for (int i = 0; i < 20; ++i) {
    admitted += d.outcome(d.Offer(8, 100)).decision.admitted();
  }
  EXPECT_EQ(admitted, 12);  // two free slots and ten queued
}

}  // namespace
}  // namespace spillway
