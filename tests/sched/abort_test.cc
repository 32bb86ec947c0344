// Aborts and stops: they take effect at the next Step (not before), free the request's KV
// blocks and report it finished once; a natural length finish during the step wins.

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "sched/fake_engine.h"
#include "sched/scheduler.h"

namespace spillway {
namespace {

using testing_util::FakeEngine;
using testing_util::FindSeq;
using testing_util::Ids;
using testing_util::Spec;

using testing_util::Config;

TEST(SchedulerAbortTest, AbortOfWaitingRequestTakesEffectAtTheNextStep) {
  FakeEngine e(Config(), 10, 16);
  e.Submit(Spec(1, 20, 5));
  EXPECT_TRUE(e.sched().Abort(1));
  // Not before the next Step: still live and waiting.
  const Request* r = e.sched().Find(1);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->state, RequestState::kWaiting);
  EXPECT_EQ(e.sched().num_waiting(), 1);
  EXPECT_FALSE(e.IsFinished(1));

  e.set_now(2.5);
  const StepPlan p = e.Step();
  EXPECT_TRUE(p.empty());
  ASSERT_EQ(e.last_step_finished().size(), 1u);
  const Request& f = e.Finished(1);
  EXPECT_EQ(f.finish_reason, FinishReason::kAbort);
  EXPECT_EQ(f.state, RequestState::kFinished);
  EXPECT_DOUBLE_EQ(f.finished_s, 2.5);
  EXPECT_EQ(f.first_scheduled_s, kNever);
  EXPECT_EQ(f.num_output_tokens, 0);
  EXPECT_EQ(e.sched().Find(1), nullptr);
  EXPECT_TRUE(e.sched().idle());
  EXPECT_EQ(e.sched().stats().waiting_prompt_tokens, 0);
  EXPECT_FALSE(e.EverPlanned(1));
}

TEST(SchedulerAbortTest, AbortOfRunningRequestFreesItsBlocksAtTheNextStep) {
  FakeEngine e(Config(), 10, 4);
  e.Submit(Spec(1, 10, 50));
  e.RunStep();
  e.RunStep();
  const Request* r = e.sched().Find(1);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(r->state, RequestState::kRunning);
  const std::size_t held = r->blocks.size();
  ASSERT_GT(held, 0u);

  EXPECT_TRUE(e.sched().Abort(1));
  // Nothing changes until the next Step: the blocks are still held.
  EXPECT_EQ(e.blocks().num_free(), 10 - static_cast<std::int32_t>(held));
  EXPECT_EQ(e.Live(1).state, RequestState::kRunning);
  EXPECT_EQ(e.sched().num_running(), 1);

  const Seconds t = e.now();
  const StepPlan p = e.Step();
  EXPECT_TRUE(p.empty());
  EXPECT_EQ(FindSeq(p, 1), nullptr);
  ASSERT_TRUE(e.IsFinished(1));
  const Request& f = e.Finished(1);
  EXPECT_EQ(f.finish_reason, FinishReason::kAbort);
  EXPECT_DOUBLE_EQ(f.finished_s, t);
  EXPECT_EQ(f.num_output_tokens, 2);
  EXPECT_DOUBLE_EQ(f.first_token_s, 1.0);
  EXPECT_TRUE(f.blocks.empty());
  EXPECT_EQ(e.blocks().num_free(), e.blocks().num_total());
  EXPECT_EQ(e.sched().num_running(), 0);
  EXPECT_TRUE(e.sched().idle());
}

TEST(SchedulerAbortTest, AbortDuringChunkedPrefillFreesThePartialBlocks) {
  FakeEngine e(Config(256, 16), 30, 4);
  e.Submit(Spec(1, 100, 5));
  e.RunStep();
  ASSERT_NE(e.sched().Find(1), nullptr);
  ASSERT_EQ(e.Live(1).num_computed_tokens, 16);
  ASSERT_EQ(e.blocks().num_free(), 26);
  EXPECT_TRUE(e.sched().Abort(1));
  e.Step();
  EXPECT_EQ(e.Finished(1).finish_reason, FinishReason::kAbort);
  EXPECT_EQ(e.Finished(1).first_token_s, kNever);
  EXPECT_EQ(e.blocks().num_free(), 30);
  EXPECT_EQ(e.sched().stats().prefill_backlog_tokens, 0);
}

TEST(SchedulerAbortTest, AbortedRequestFreesRoomForTheNextWaitingRequestInTheSameStep) {
  FakeEngine e(Config(1), 10, 16);
  e.Submit(Spec(1, 10, 50, 0));
  e.Submit(Spec(2, 10, 1, 1));
  e.RunStep();
  EXPECT_EQ(e.Live(2).state, RequestState::kWaiting);
  EXPECT_TRUE(e.sched().Abort(1));
  const StepPlan p = e.Step();
  EXPECT_EQ(Ids(p), (std::vector<RequestId>{2}));
  EXPECT_EQ(e.Finished(1).finish_reason, FinishReason::kAbort);
}

TEST(SchedulerAbortTest, AbortOfUnknownOrFinishedIdReturnsFalse) {
  FakeEngine e(Config(), 10, 16);
  EXPECT_FALSE(e.sched().Abort(7));
  e.Submit(Spec(1, 4, 1));
  e.RunStep();
  ASSERT_TRUE(e.IsFinished(1));
  EXPECT_FALSE(e.sched().Abort(1));
  EXPECT_FALSE(e.sched().Finish(1, FinishReason::kStop));
  e.Step();
  EXPECT_EQ(e.finished().size(), 1u);
}

TEST(SchedulerAbortTest, RepeatedAbortFinishesTheRequestOnce) {
  FakeEngine e(Config(), 10, 16);
  e.Submit(Spec(1, 4, 10));
  e.RunStep();
  EXPECT_TRUE(e.sched().Abort(1));
  e.sched().Abort(1);  // the return value of a repeated abort is not part of the contract
  e.Step();
  e.Step();
  EXPECT_EQ(e.finished().size(), 1u);  // FakeEngine also fails on a double finish
  EXPECT_EQ(e.Finished(1).finish_reason, FinishReason::kAbort);
  EXPECT_FALSE(e.sched().Abort(1));
}

TEST(SchedulerAbortTest, AbortBetweenStepAndOnStepDoneAppliesTheStepThenAbortsAtTheNextStep) {
  FakeEngine e(Config(), 10, 16);
  e.Submit(Spec(1, 4, 10));
  e.RunStep();
  const StepPlan p = e.Step();  // a decode for request 1 is in flight
  ASSERT_NE(FindSeq(p, 1), nullptr);
  EXPECT_TRUE(e.sched().Abort(1));
  e.Done();
  // The step that was running still delivers its token.
  ASSERT_EQ(e.last_done_tokens().size(), 1u);
  EXPECT_EQ(e.last_done_tokens()[0].index, 1);
  EXPECT_FALSE(e.IsFinished(1));
  ASSERT_NE(e.sched().Find(1), nullptr);
  EXPECT_EQ(e.Live(1).num_output_tokens, 2);

  const Seconds t = e.now();
  EXPECT_TRUE(e.Step().empty());
  ASSERT_TRUE(e.IsFinished(1));
  EXPECT_EQ(e.Finished(1).finish_reason, FinishReason::kAbort);
  EXPECT_DOUBLE_EQ(e.Finished(1).finished_s, t);
  EXPECT_EQ(e.Finished(1).num_output_tokens, 2);
  EXPECT_EQ(e.blocks().num_free(), 10);
}

TEST(SchedulerAbortTest, AbortDuringTheStepThatReachesMaxTokensFinishesAsLength) {
  FakeEngine e(Config(), 10, 16);
  e.Submit(Spec(1, 4, 2));
  e.RunStep();                  // first token
  const StepPlan p = e.Step();  // the second and last token is in flight
  ASSERT_NE(FindSeq(p, 1), nullptr);
  EXPECT_TRUE(e.sched().Abort(1));
  e.Done();
  ASSERT_EQ(e.last_done_finished().size(), 1u);
  const Request& f = e.Finished(1);
  EXPECT_EQ(f.finish_reason, FinishReason::kLength);
  EXPECT_EQ(f.num_output_tokens, 2);
  EXPECT_DOUBLE_EQ(f.finished_s, 2.0);
  EXPECT_EQ(e.sched().Find(1), nullptr);
  EXPECT_EQ(e.blocks().num_free(), 10);
  // The next Step does not report it again (FakeEngine fails on a double finish).
  EXPECT_TRUE(e.Step().empty());
  EXPECT_TRUE(e.last_step_finished().empty());
  EXPECT_EQ(e.finished().size(), 1u);
  EXPECT_FALSE(e.sched().Abort(1));
}

TEST(SchedulerAbortTest, LengthFinishDuringStepKeepsOtherPendingAborts) {
  FakeEngine e(Config(), 10, 16);
  e.Submit(Spec(1, 4, 2, 0));
  e.Submit(Spec(2, 4, 10, 1));
  e.Submit(Spec(3, 4, 10, 2));
  e.RunStep();
  e.Step();
  EXPECT_TRUE(e.sched().Abort(2));
  EXPECT_TRUE(e.sched().Abort(1));  // 1 reaches its max in this step
  e.Done();
  EXPECT_EQ(e.Finished(1).finish_reason, FinishReason::kLength);
  EXPECT_FALSE(e.IsFinished(2));
  const StepPlan p = e.Step();
  EXPECT_EQ(Ids(p), (std::vector<RequestId>{3}));
  ASSERT_TRUE(e.IsFinished(2));
  EXPECT_EQ(e.Finished(2).finish_reason, FinishReason::kAbort);
  EXPECT_FALSE(e.IsFinished(3));
}

TEST(SchedulerAbortTest, StopRequestedDuringTheFinalStepFinishesAsLength) {
  FakeEngine e(Config(), 10, 16);
  e.Submit(Spec(1, 4, 1));
  e.Step();
  EXPECT_TRUE(e.sched().Finish(1, FinishReason::kStop));
  e.Done();
  EXPECT_EQ(e.Finished(1).finish_reason, FinishReason::kLength);
  e.Step();
  EXPECT_EQ(e.finished().size(), 1u);
}

TEST(SchedulerAbortTest, AbortOfWaitingRequestDoesNotDisturbOthers) {
  FakeEngine e(Config(1), 10, 16);
  e.Submit(Spec(1, 4, 3, 0));
  e.Submit(Spec(2, 4, 3, 1));
  e.Submit(Spec(3, 4, 3, 2));
  e.RunStep();
  EXPECT_TRUE(e.sched().Abort(2));
  e.RunUntilIdle();
  EXPECT_EQ(e.Finished(1).finish_reason, FinishReason::kLength);
  EXPECT_EQ(e.Finished(2).finish_reason, FinishReason::kAbort);
  EXPECT_EQ(e.Finished(3).finish_reason, FinishReason::kLength);
  EXPECT_FALSE(e.EverPlanned(2));
  EXPECT_EQ(e.blocks().num_free(), 10);
}

}  // namespace
}  // namespace spillway
