// Queue-ingress deadlines: a never-scheduled waiting request whose deadline has passed is
// dropped at the next step wherever it is in the queue, with reason deadline and without any
// prefill; a request that was ever scheduled is never dropped.

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sched/fake_engine.h"
#include "sched/scheduler.h"

namespace spillway {
namespace {

using testing_util::FakeEngine;
using testing_util::Ids;
using testing_util::Spec;

using testing_util::Config;

TEST(SchedulerDeadlineTest, ExpiredWaitingRequestIsDroppedWithoutPrefill) {
  FakeEngine e(Config(), 10, 16);
  e.Submit(Spec(1, 20, 5, /*arrival=*/0, /*priority=*/0, /*deadline=*/5.0));
  e.set_now(6.0);
  const StepPlan p = e.Step();
  EXPECT_TRUE(p.empty());
  ASSERT_EQ(e.last_step_finished().size(), 1u);
  const Request& f = e.Finished(1);
  EXPECT_EQ(f.finish_reason, FinishReason::kDeadline);
  EXPECT_EQ(f.state, RequestState::kFinished);
  EXPECT_DOUBLE_EQ(f.finished_s, 6.0);
  EXPECT_EQ(f.first_scheduled_s, kNever);
  EXPECT_EQ(f.num_computed_tokens, 0);
  EXPECT_EQ(f.num_output_tokens, 0);
  EXPECT_TRUE(f.blocks.empty());
  EXPECT_FALSE(e.EverPlanned(1));
  EXPECT_EQ(e.sched().Find(1), nullptr);
  EXPECT_TRUE(e.sched().idle());
  EXPECT_EQ(e.blocks().num_free(), 10);
  EXPECT_EQ(e.sched().stats().waiting_prompt_tokens, 0);
}

TEST(SchedulerDeadlineTest, RequestScheduledBeforeItsDeadlineIsNotDropped) {
  FakeEngine e(Config(), 10, 16);
  e.Submit(Spec(1, 20, 2, 0, 0, /*deadline=*/5.0));
  e.set_now(4.5);
  const StepPlan p = e.Step();
  EXPECT_EQ(Ids(p), (std::vector<RequestId>{1}));
  EXPECT_TRUE(e.last_step_finished().empty());
}

TEST(SchedulerDeadlineTest, ExpiredHeadIsDroppedAndTheNextRequestIsAdmittedInTheSameStep) {
  FakeEngine e(Config(), 10, 16);
  e.Submit(Spec(1, 20, 5, 0, 0, /*deadline=*/1.0));
  e.Submit(Spec(2, 20, 5, 0.5));
  e.Submit(Spec(3, 20, 5, 0.7, 0, /*deadline=*/1.5));
  e.set_now(2.0);
  const StepPlan p = e.Step();
  EXPECT_EQ(Ids(p), (std::vector<RequestId>{2}));
  EXPECT_EQ(e.Finished(1).finish_reason, FinishReason::kDeadline);
  EXPECT_EQ(e.Finished(3).finish_reason, FinishReason::kDeadline);
  EXPECT_FALSE(e.EverPlanned(1));
  EXPECT_FALSE(e.EverPlanned(3));
}

TEST(SchedulerDeadlineTest, WaitingRequestExpiringBehindAFullBatchIsDroppedAtTheHead) {
  FakeEngine e(Config(/*max_num_seqs=*/1), 10, 16);
  e.Submit(Spec(1, 4, 5, 0));
  e.RunStep();  // t=0: 1 holds the only seat
  e.Submit(Spec(2, 4, 5, 0.5, 0, /*deadline=*/2.0));
  e.Submit(Spec(3, 4, 1, 0.6));
  e.RunUntilFinished(1);
  EXPECT_FALSE(e.EverPlanned(2));
  // The seat is free now: 2 reaches the head long after its deadline and is dropped.
  const StepPlan p = e.Step();
  ASSERT_TRUE(e.IsFinished(2));
  const Request& f = e.Finished(2);
  EXPECT_EQ(f.finish_reason, FinishReason::kDeadline);
  EXPECT_EQ(f.first_scheduled_s, kNever);
  EXPECT_GT(f.finished_s, 2.0);
  EXPECT_EQ(Ids(p), (std::vector<RequestId>{3}));
  e.RunUntilIdle();
  EXPECT_FALSE(e.EverPlanned(2));
  EXPECT_EQ(e.Finished(3).finish_reason, FinishReason::kLength);
}

TEST(SchedulerDeadlineTest, ExpiredHeadIsDroppedEvenWhileTheBatchIsFull) {
  // The drop does not wait for a free seat: an expired head stops counting as queued work at
  // the first step after its deadline.
  FakeEngine e(Config(/*max_num_seqs=*/1), 10, 16);
  e.Submit(Spec(1, 4, 50, 0));
  e.RunStep();  // t=0 -> 1: request 1 holds the only seat for 50 steps
  e.Submit(Spec(2, 4, 5, 0.5, 0, /*deadline=*/2.0));
  e.RunStep();  // t=1 -> 2: not yet expired
  EXPECT_EQ(e.sched().stats().num_waiting, 1);
  e.RunStep();  // t=2 -> 3: now > 2.0 only after this step's start; still waiting
  e.RunStep();  // t=3: expired at the head, dropped though request 1 still runs
  ASSERT_TRUE(e.IsFinished(2));
  EXPECT_EQ(e.Finished(2).finish_reason, FinishReason::kDeadline);
  EXPECT_FALSE(e.IsFinished(1));
  EXPECT_EQ(e.sched().stats().num_waiting, 0);
  EXPECT_EQ(e.sched().stats().waiting_prompt_tokens, 0);
}

TEST(SchedulerDeadlineTest, RunningRequestPastItsDeadlineIsNotDropped) {
  FakeEngine e(Config(), 10, 16);
  e.Submit(Spec(1, 4, 10, 0, 0, /*deadline=*/2.5));
  e.RunUntilIdle();
  const Request& f = e.Finished(1);
  EXPECT_EQ(f.finish_reason, FinishReason::kLength);
  EXPECT_EQ(f.num_output_tokens, 10);
  EXPECT_GT(f.finished_s, 2.5);
}

TEST(SchedulerDeadlineTest, ChunkedPrefillInProgressPastItsDeadlineIsNotDropped) {
  FakeEngine e(Config(256, 16), 20, 16);
  e.Submit(Spec(1, 100, 2, 0, 0, /*deadline=*/0.5));
  e.RunUntilIdle();
  const Request& f = e.Finished(1);
  EXPECT_EQ(f.finish_reason, FinishReason::kLength);
  EXPECT_EQ(f.num_output_tokens, 2);
  EXPECT_DOUBLE_EQ(f.first_scheduled_s, 0.0);
}

TEST(SchedulerDeadlineTest, RequestWithoutDeadlineWaitsIndefinitely) {
  FakeEngine e(Config(/*max_num_seqs=*/1), 10, 16);
  e.Submit(Spec(1, 4, 100, 0));
  e.RunStep();
  e.Submit(Spec(2, 4, 1, 0.5));
  e.set_now(1e6);
  e.RunStep();
  EXPECT_FALSE(e.IsFinished(2));
  ASSERT_NE(e.sched().Find(2), nullptr);
  EXPECT_EQ(e.Live(2).state, RequestState::kWaiting);
}

// Issue 12, finding 4: a request overtaken by more urgent ones (priority scheduling) expires
// behind them; it is dropped at its deadline, not when it finally reaches the head (live, that
// was a 504 at the request deadline instead of a 429 at the queue-ingress deadline).
TEST(SchedulerDeadlineTest, AnExpiredRequestBehindTheHeadIsDroppedAtOnce) {
  SchedulerConfig c = Config();
  c.policy = SchedulingPolicy::kPriority;
  c.priority_aging_s = 10;
  c.max_num_seqs = 1;
  FakeEngine e(c, 100, 16);
  e.Submit(Spec(1, 4, 50, 0));  // holds the only seat
  e.RunStep();
  e.Submit(Spec(2, 4, 5, 0.1, /*priority=*/5, /*deadline=*/1.0));
  e.Submit(Spec(3, 4, 5, 0.2, /*priority=*/0));  // overtakes 2, no deadline
  e.set_now(1.5);
  e.Step();
  ASSERT_EQ(e.last_step_finished().size(), 1u);
  EXPECT_EQ(e.Finished(2).finish_reason, FinishReason::kDeadline);
  EXPECT_EQ(e.sched().num_waiting(), 1);  // 3, still behind the full batch
  std::string error;
  EXPECT_TRUE(e.sched().CheckInvariants(&error)) << error;
}

}  // namespace
}  // namespace spillway
