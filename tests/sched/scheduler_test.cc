// Scheduler lifecycle and batching: WAITING -> RUNNING -> FINISHED(length) with timestamps,
// prefill then one decode per step, chunked prefill, whole-prompt prefill without chunking
// (FCFS, no overtaking), running-before-waiting, max_num_seqs, queue order and EngineStats.

#include "sched/scheduler.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sched/fake_engine.h"

namespace spillway {
namespace {

using testing_util::FakeEngine;
using testing_util::FakeToken;
using testing_util::FindSeq;
using testing_util::Ids;
using testing_util::Spec;

using testing_util::Config;

TEST(SchedulerLifecycleTest, RequestGoesWaitingRunningFinishedLengthWithStepTimestamps) {
  FakeEngine e(Config(), 100, 16, /*step_s=*/0.25);
  e.set_now(5.0);
  e.Submit(Spec(1, 10, 3, /*arrival=*/4.0));
  const Request* r = e.sched().Find(1);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->state, RequestState::kWaiting);
  EXPECT_EQ(r->first_scheduled_s, kNever);
  EXPECT_TRUE(r->blocks.empty());
  EXPECT_EQ(e.sched().num_waiting(), 1);
  EXPECT_FALSE(e.sched().idle());

  // Step 0 at t=5.00: the whole prompt is prefilled and the first token sampled.
  StepPlan p = e.Step();
  ASSERT_EQ(p.seqs.size(), 1u);
  EXPECT_EQ(p.seqs[0].id, 1u);
  EXPECT_EQ(p.seqs[0].num_new_tokens, 10);
  EXPECT_EQ(p.seqs[0].num_context_tokens, 0);
  EXPECT_TRUE(p.seqs[0].samples_token);
  EXPECT_FALSE(p.seqs[0].is_decode);
  EXPECT_EQ(p.num_prefill_tokens, 10);
  EXPECT_EQ(p.num_decode_tokens, 0);
  EXPECT_EQ(p.num_tokens(), 10);
  r = e.sched().Find(1);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->state, RequestState::kRunning);
  EXPECT_DOUBLE_EQ(r->first_scheduled_s, 5.0);
  EXPECT_EQ(r->first_token_s, kNever);
  EXPECT_EQ(r->blocks.size(), 1u);
  EXPECT_EQ(e.sched().num_running(), 1);
  EXPECT_EQ(e.sched().num_waiting(), 0);

  e.Done();  // t=5.25
  r = e.sched().Find(1);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->num_computed_tokens, 10);
  EXPECT_EQ(r->num_output_tokens, 1);
  EXPECT_DOUBLE_EQ(r->first_token_s, 5.25);
  EXPECT_DOUBLE_EQ(r->last_token_s, 5.25);
  ASSERT_EQ(e.last_done_tokens().size(), 1u);
  EXPECT_EQ(e.last_done_tokens()[0].id, 1u);
  EXPECT_EQ(e.last_done_tokens()[0].index, 0);
  EXPECT_EQ(e.last_done_tokens()[0].token_id, FakeToken(1, 0));

  // Step 1 at t=5.25: one decode token with the prompt as context.
  p = e.Step();
  ASSERT_EQ(p.seqs.size(), 1u);
  EXPECT_EQ(p.seqs[0].num_new_tokens, 1);
  EXPECT_EQ(p.seqs[0].num_context_tokens, 10);
  EXPECT_TRUE(p.seqs[0].samples_token);
  EXPECT_TRUE(p.seqs[0].is_decode);
  EXPECT_EQ(p.num_prefill_tokens, 0);
  EXPECT_EQ(p.num_decode_tokens, 1);
  e.Done();  // t=5.50
  r = e.sched().Find(1);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->num_output_tokens, 2);
  EXPECT_DOUBLE_EQ(r->first_token_s, 5.25);
  EXPECT_DOUBLE_EQ(r->last_token_s, 5.5);

  // Step 2 at t=5.50: the last decode; the request finishes when the step completes.
  p = e.Step();
  ASSERT_EQ(p.seqs.size(), 1u);
  EXPECT_EQ(p.seqs[0].num_context_tokens, 11);
  EXPECT_TRUE(p.seqs[0].is_decode);
  e.Done();  // t=5.75
  EXPECT_EQ(e.sched().Find(1), nullptr);
  ASSERT_EQ(e.last_done_finished().size(), 1u);
  const Request& f = e.Finished(1);
  EXPECT_EQ(f.state, RequestState::kFinished);
  EXPECT_EQ(f.finish_reason, FinishReason::kLength);
  EXPECT_EQ(f.num_output_tokens, 3);
  EXPECT_DOUBLE_EQ(f.first_scheduled_s, 5.0);
  EXPECT_DOUBLE_EQ(f.first_token_s, 5.25);
  EXPECT_DOUBLE_EQ(f.last_token_s, 5.75);
  EXPECT_DOUBLE_EQ(f.finished_s, 5.75);
  EXPECT_TRUE(f.blocks.empty());
  EXPECT_EQ(f.num_preemptions, 0);
  EXPECT_EQ(f.num_recomputed_tokens, 0);

  const std::vector<TokenEvent> toks = e.TokensOf(1);
  ASSERT_EQ(toks.size(), 3u);
  for (std::int32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(toks[static_cast<std::size_t>(i)].index, i);
    EXPECT_EQ(toks[static_cast<std::size_t>(i)].token_id, FakeToken(1, i));
  }
  EXPECT_TRUE(e.sched().idle());
  EXPECT_EQ(e.blocks().num_free(), e.blocks().num_total());
  EXPECT_TRUE(e.Step().empty());
}

TEST(SchedulerLifecycleTest, MaxOutputOneFinishesRightAfterPrefill) {
  FakeEngine e(Config(), 10, 16);
  e.Submit(Spec(1, 5, 1));
  e.RunStep();
  ASSERT_TRUE(e.IsFinished(1));
  const Request& f = e.Finished(1);
  EXPECT_EQ(f.finish_reason, FinishReason::kLength);
  EXPECT_EQ(f.num_output_tokens, 1);
  EXPECT_DOUBLE_EQ(f.first_token_s, 1.0);
  EXPECT_DOUBLE_EQ(f.finished_s, 1.0);
  EXPECT_EQ(e.plans().size(), 1u);
  EXPECT_EQ(e.blocks().num_free(), 10);
}

TEST(SchedulerLifecycleTest, EachStepDecodesExactlyOneTokenPerRunningSequence) {
  FakeEngine e(Config(), 100, 16);
  e.Submit(Spec(1, 7, 6, 0));
  e.Submit(Spec(2, 20, 4, 0.5));
  e.RunStep();  // both prefills
  for (int step = 1; step < 4; ++step) {
    const StepPlan p = e.Step();
    ASSERT_EQ(p.seqs.size(), 2u) << "step " << step;
    for (const ScheduledSeq& s : p.seqs) {
      EXPECT_EQ(s.num_new_tokens, 1);
      EXPECT_TRUE(s.is_decode);
      EXPECT_TRUE(s.samples_token);
    }
    EXPECT_EQ(p.num_decode_tokens, 2);
    EXPECT_EQ(p.num_prefill_tokens, 0);
    e.Done();
    EXPECT_EQ(e.last_done_tokens().size(), 2u);
  }
  // Request 2 reached 4 tokens; request 1 continues alone.
  EXPECT_TRUE(e.IsFinished(2));
  EXPECT_FALSE(e.IsFinished(1));
  e.RunUntilIdle();
  EXPECT_EQ(e.Finished(1).num_output_tokens, 6);
  EXPECT_EQ(e.Finished(2).num_output_tokens, 4);
  EXPECT_EQ(e.Finished(1).num_computed_tokens, 7 + 6 - 1);
}

TEST(SchedulerLifecycleTest, FinishWithStopEndsTheRequestWithReasonStop) {
  FakeEngine e(Config(), 10, 16);
  e.Submit(Spec(1, 5, 100));
  e.RunStep();
  EXPECT_TRUE(e.sched().Finish(1, FinishReason::kStop));
  e.Step();
  ASSERT_TRUE(e.IsFinished(1));
  EXPECT_EQ(e.Finished(1).finish_reason, FinishReason::kStop);
  EXPECT_EQ(e.blocks().num_free(), 10);
}

TEST(SchedulerChunkedPrefillTest, LongPromptIsSplitAcrossStepsWithinTheTokenBudget) {
  FakeEngine e(Config(256, 64, true), 100, 16);
  e.Submit(Spec(1, 150, 2));

  StepPlan p = e.Step();  // t=0
  ASSERT_EQ(p.seqs.size(), 1u);
  EXPECT_EQ(p.seqs[0].num_new_tokens, 64);
  EXPECT_EQ(p.seqs[0].num_context_tokens, 0);
  EXPECT_FALSE(p.seqs[0].samples_token);
  EXPECT_FALSE(p.seqs[0].is_decode);
  EXPECT_EQ(e.Live(1).blocks.size(), 4u);  // blocks only for the chunk
  e.Done();                                // t=1
  EXPECT_TRUE(e.last_done_tokens().empty());
  EXPECT_EQ(e.Live(1).first_token_s, kNever);
  EXPECT_EQ(e.Live(1).num_computed_tokens, 64);
  EXPECT_EQ(e.Live(1).num_output_tokens, 0);

  p = e.Step();  // t=1
  ASSERT_EQ(p.seqs.size(), 1u);
  EXPECT_EQ(p.seqs[0].num_new_tokens, 64);
  EXPECT_EQ(p.seqs[0].num_context_tokens, 64);
  EXPECT_FALSE(p.seqs[0].samples_token);
  e.Done();  // t=2
  EXPECT_TRUE(e.last_done_tokens().empty());
  EXPECT_EQ(e.Live(1).first_token_s, kNever);

  p = e.Step();  // t=2: the last chunk samples the first token
  ASSERT_EQ(p.seqs.size(), 1u);
  EXPECT_EQ(p.seqs[0].num_new_tokens, 22);
  EXPECT_EQ(p.seqs[0].num_context_tokens, 128);
  EXPECT_TRUE(p.seqs[0].samples_token);
  EXPECT_FALSE(p.seqs[0].is_decode);
  EXPECT_EQ(e.Live(1).blocks.size(), 10u);
  e.Done();  // t=3
  ASSERT_EQ(e.last_done_tokens().size(), 1u);
  EXPECT_DOUBLE_EQ(e.Live(1).first_token_s, 3.0);
  EXPECT_DOUBLE_EQ(e.Live(1).first_scheduled_s, 0.0);

  p = e.Step();  // t=3: decode
  ASSERT_EQ(p.seqs.size(), 1u);
  EXPECT_TRUE(p.seqs[0].is_decode);
  EXPECT_EQ(p.seqs[0].num_context_tokens, 150);
  e.Done();
  EXPECT_EQ(e.Finished(1).finish_reason, FinishReason::kLength);
  for (const StepPlan& plan : e.plans()) {
    EXPECT_LE(plan.num_tokens(), 64);
  }
}

TEST(SchedulerChunkedPrefillTest, ChunkFillsTheBudgetLeftAfterRunningDecodes) {
  FakeEngine e(Config(256, 64, true), 100, 16);
  e.Submit(Spec(1, 10, 10, 0));
  e.RunStep();
  e.Submit(Spec(2, 100, 3, 1));
  StepPlan p = e.Step();
  ASSERT_EQ(Ids(p), (std::vector<RequestId>{1, 2}));
  EXPECT_TRUE(p.seqs[0].is_decode);
  EXPECT_EQ(p.seqs[1].num_new_tokens, 63);
  EXPECT_FALSE(p.seqs[1].samples_token);
  EXPECT_EQ(p.num_decode_tokens, 1);
  EXPECT_EQ(p.num_prefill_tokens, 63);
  EXPECT_EQ(p.num_tokens(), 64);
  e.Done();
  p = e.Step();  // running order: the decode, then the rest of the prompt
  ASSERT_EQ(Ids(p), (std::vector<RequestId>{1, 2}));
  EXPECT_EQ(p.seqs[1].num_new_tokens, 37);
  EXPECT_EQ(p.seqs[1].num_context_tokens, 63);
  EXPECT_TRUE(p.seqs[1].samples_token);
  e.Done();
  EXPECT_EQ(e.Live(2).num_output_tokens, 1);
  e.RunUntilIdle();
  for (const StepPlan& plan : e.plans()) {
    EXPECT_LE(plan.num_tokens(), 64);
  }
}

TEST(SchedulerChunkedPrefillTest, SeveralPromptsShareOneStepAndTheLastIsChunked) {
  FakeEngine e(Config(256, 64, true), 100, 16);
  e.Submit(Spec(1, 30, 1, 0));
  e.Submit(Spec(2, 30, 1, 1));
  e.Submit(Spec(3, 30, 1, 2));
  const StepPlan p = e.Step();
  ASSERT_EQ(Ids(p), (std::vector<RequestId>{1, 2, 3}));
  EXPECT_EQ(p.seqs[0].num_new_tokens, 30);
  EXPECT_EQ(p.seqs[1].num_new_tokens, 30);
  EXPECT_EQ(p.seqs[2].num_new_tokens, 4);
  EXPECT_FALSE(p.seqs[2].samples_token);
  EXPECT_EQ(p.num_tokens(), 64);
}

TEST(SchedulerNoChunkingTest, WholePromptsArePackedUntilTheNextDoesNotFit) {
  FakeEngine e(Config(256, 64, false), 100, 16);
  e.Submit(Spec(1, 30, 1, 0));
  e.Submit(Spec(2, 30, 1, 1));
  e.Submit(Spec(3, 30, 1, 2));
  StepPlan p = e.Step();
  ASSERT_EQ(Ids(p), (std::vector<RequestId>{1, 2}));
  EXPECT_EQ(p.num_tokens(), 60);
  EXPECT_TRUE(p.seqs[0].samples_token);
  EXPECT_TRUE(p.seqs[1].samples_token);
  EXPECT_EQ(e.Live(3).state, RequestState::kWaiting);
  e.Done();
  p = e.Step();
  ASSERT_EQ(Ids(p), (std::vector<RequestId>{3}));
  EXPECT_EQ(p.seqs[0].num_new_tokens, 30);
}

// scheduler.h, step 4: a waiting request that can never fit (here: a prompt larger than the
// token budget without chunked prefill) is finished at once with kRejected, so it cannot wedge
// the queue, and is never prefilled.
TEST(SchedulerNoChunkingTest, PromptLargerThanBudgetIsRejectedWithoutPrefill) {
  FakeEngine e(Config(256, 64, false), 100, 16);
  e.Submit(Spec(1, 100, 5, 0));
  e.Submit(Spec(2, 10, 5, 1));
  const StepPlan p = e.Step();
  ASSERT_TRUE(e.IsFinished(1));
  const Request& f = e.Finished(1);
  EXPECT_EQ(f.finish_reason, FinishReason::kRejected);
  EXPECT_EQ(f.first_scheduled_s, kNever);
  EXPECT_EQ(f.num_computed_tokens, 0);
  EXPECT_EQ(f.num_preemptions, 0);
  EXPECT_FALSE(e.EverPlanned(1));
  EXPECT_EQ(Ids(p), (std::vector<RequestId>{2}));
  EXPECT_EQ(e.sched().stats().waiting_prompt_tokens, 0);
}

TEST(SchedulerNoChunkingTest, PromptExactlyTheBudgetIsScheduledWhole) {
  FakeEngine e(Config(256, 64, false), 100, 16);
  e.Submit(Spec(1, 64, 1));
  const StepPlan p = e.Step();
  ASSERT_EQ(Ids(p), (std::vector<RequestId>{1}));
  EXPECT_EQ(p.seqs[0].num_new_tokens, 64);
  EXPECT_TRUE(p.seqs[0].samples_token);
}

TEST(SchedulerRejectTest, PromptLargerThanTheWholeKvPoolIsRejectedEvenWithChunking) {
  FakeEngine e(Config(256, 16, true), 4, 16);  // 64 tokens of KV in all
  e.Submit(Spec(1, 65, 1, 0));
  e.Submit(Spec(2, 64, 1, 1));
  const StepPlan p = e.Step();
  ASSERT_TRUE(e.IsFinished(1));
  EXPECT_EQ(e.Finished(1).finish_reason, FinishReason::kRejected);
  EXPECT_FALSE(e.EverPlanned(1));
  EXPECT_EQ(Ids(p), (std::vector<RequestId>{2}));
  e.RunUntilIdle();
  EXPECT_EQ(e.Finished(2).finish_reason, FinishReason::kLength);
}

TEST(SchedulerNoChunkingTest, PromptWaitsForTheWholeBudgetAndLaterRequestsDoNotOvertake) {
  FakeEngine e(Config(256, 64, false), 100, 16);
  e.Submit(Spec(1, 10, 5, 0));
  e.RunStep();  // t=0: request 1 prefilled
  e.Submit(Spec(2, 64, 2, 1));
  e.Submit(Spec(3, 5, 2, 2));
  // While request 1 decodes, only 63 tokens are left: 2 needs 64, and 3 must not overtake it.
  for (int step = 1; step <= 4; ++step) {
    const StepPlan p = e.Step();
    ASSERT_EQ(Ids(p), (std::vector<RequestId>{1})) << "step " << step;
    e.Done();
  }
  ASSERT_TRUE(e.IsFinished(1));
  StepPlan p = e.Step();  // the whole budget goes to request 2
  ASSERT_EQ(Ids(p), (std::vector<RequestId>{2}));
  EXPECT_EQ(p.seqs[0].num_new_tokens, 64);
  EXPECT_TRUE(p.seqs[0].samples_token);
  e.Done();
  p = e.Step();
  ASSERT_EQ(Ids(p), (std::vector<RequestId>{2, 3}));
  EXPECT_TRUE(p.seqs[0].is_decode);
  EXPECT_EQ(p.seqs[1].num_new_tokens, 5);
  e.Done();
  e.RunUntilIdle();
  EXPECT_LT(e.Finished(2).first_scheduled_s, e.Finished(3).first_scheduled_s);
  for (const StepPlan& plan : e.plans()) {
    EXPECT_LE(plan.num_tokens(), 64);
    for (const ScheduledSeq& s : plan.seqs) {
      EXPECT_TRUE(s.samples_token) << "without chunking every prefill is whole";
    }
  }
}

TEST(SchedulerBatchingTest, RunningDecodesAreScheduledBeforeWaitingPrefills) {
  FakeEngine e(Config(256, 3, true), 100, 16);
  e.Submit(Spec(1, 1, 5, 0));
  e.Submit(Spec(2, 1, 5, 1));
  e.RunStep();  // 1 and 2 prefilled (2 of 3 tokens)
  e.Submit(Spec(3, 8, 1, 2));
  StepPlan p = e.Step();
  ASSERT_EQ(Ids(p), (std::vector<RequestId>{1, 2, 3}));
  EXPECT_TRUE(p.seqs[0].is_decode);
  EXPECT_TRUE(p.seqs[1].is_decode);
  EXPECT_EQ(p.seqs[2].num_new_tokens, 1);  // only the leftover token goes to the prefill
  e.Done();
}

TEST(SchedulerBatchingTest, DecodesThatUseTheWholeBudgetLeaveNoRoomForPrefills) {
  FakeEngine e(Config(256, 2, true), 100, 16);
  e.Submit(Spec(1, 1, 4, 0));
  e.Submit(Spec(2, 1, 4, 1));
  e.Submit(Spec(3, 1, 1, 2));
  e.RunStep();
  for (int step = 1; step < 4; ++step) {
    const StepPlan p = e.Step();
    EXPECT_EQ(Ids(p), (std::vector<RequestId>{1, 2})) << "step " << step;
    e.Done();
    EXPECT_EQ(e.Live(3).state, RequestState::kWaiting);
  }
  const StepPlan p = e.Step();
  EXPECT_EQ(Ids(p), (std::vector<RequestId>{3}));
}

TEST(SchedulerBatchingTest, MaxNumSeqsCapsTheRunningBatch) {
  FakeEngine e(Config(2, 2048, true), 100, 16);
  for (RequestId id = 1; id <= 4; ++id) {
    e.Submit(Spec(id, 4, 3, static_cast<Seconds>(id)));
  }
  StepPlan p = e.Step();
  EXPECT_EQ(Ids(p), (std::vector<RequestId>{1, 2}));
  EXPECT_EQ(e.sched().num_running(), 2);
  EXPECT_EQ(e.sched().num_waiting(), 2);
  EXPECT_EQ(e.sched().stats().max_num_seqs, 2);
  e.Done();
  for (int step = 1; step < 3; ++step) {
    p = e.Step();
    EXPECT_EQ(Ids(p), (std::vector<RequestId>{1, 2}));
    e.Done();
  }
  ASSERT_TRUE(e.IsFinished(1));
  ASSERT_TRUE(e.IsFinished(2));
  p = e.Step();  // t=3: the freed seats go to 3 and 4
  EXPECT_EQ(Ids(p), (std::vector<RequestId>{3, 4}));
  EXPECT_DOUBLE_EQ(e.Live(3).first_scheduled_s, 3.0);
  EXPECT_DOUBLE_EQ(e.Live(4).first_scheduled_s, 3.0);
  e.Done();
  e.RunUntilIdle();
  for (const StepPlan& plan : e.plans()) {
    EXPECT_LE(plan.seqs.size(), 2u);
  }
}

TEST(SchedulerBatchingTest, MaxNumSeqsOneServesRequestsOneAtATime) {
  FakeEngine e(Config(1, 2048, true), 100, 16);
  e.Submit(Spec(1, 4, 2, 0));
  e.Submit(Spec(2, 4, 2, 1));
  e.RunUntilIdle();
  EXPECT_LE(e.Finished(1).finished_s, e.Finished(2).first_scheduled_s);
  for (const StepPlan& plan : e.plans()) {
    EXPECT_LE(plan.seqs.size(), 1u);
  }
}

TEST(SchedulerQueueOrderTest, FcfsOrdersByArrivalNotSubmissionOrder) {
  FakeEngine e(Config(), 100, 16);
  e.Submit(Spec(1, 4, 1, 5.0));
  e.Submit(Spec(2, 4, 1, 3.0));
  e.Submit(Spec(3, 4, 1, 4.0));
  EXPECT_EQ(Ids(e.Step()), (std::vector<RequestId>{2, 3, 1}));
}

TEST(SchedulerQueueOrderTest, FcfsBreaksArrivalTiesById) {
  FakeEngine e(Config(), 100, 16);
  e.Submit(Spec(9, 4, 1, 1.0));
  e.Submit(Spec(4, 4, 1, 1.0));
  e.Submit(Spec(6, 4, 1, 1.0));
  EXPECT_EQ(Ids(e.Step()), (std::vector<RequestId>{4, 6, 9}));
}

TEST(SchedulerQueueOrderTest, FcfsPolicyIgnoresPriorityForAdmission) {
  FakeEngine e(Config(1), 100, 16);
  e.Submit(Spec(1, 4, 1, 0.0, /*priority=*/2));
  e.Submit(Spec(2, 4, 1, 1.0, /*priority=*/0));
  EXPECT_EQ(Ids(e.Step()), (std::vector<RequestId>{1}));
}

TEST(SchedulerLifecycleTest, FindReturnsNullForUnknownIds) {
  FakeEngine e(Config(), 10, 16);
  EXPECT_EQ(e.sched().Find(42), nullptr);
  EXPECT_TRUE(e.sched().idle());
  EXPECT_TRUE(e.Step().empty());
}

TEST(SchedulerLifecycleTest, IdCanBeReusedAfterTheRequestFinished) {
  FakeEngine e(Config(), 10, 16);
  e.Submit(Spec(1, 4, 1));
  e.RunStep();
  ASSERT_EQ(e.sched().Find(1), nullptr);
  e.sched().Submit(Spec(1, 4, 1, 2.0));
  EXPECT_NE(e.sched().Find(1), nullptr);
}

TEST(SchedulerStatsTest, CountersTrackWaitingPrefillBacklogAndKvUsage) {
  FakeEngine e(Config(256, 64, true), 10, 16);
  EngineStats s = e.sched().stats();
  EXPECT_EQ(s.num_waiting, 0);
  EXPECT_EQ(s.num_running, 0);
  EXPECT_EQ(s.waiting_prompt_tokens, 0);
  EXPECT_EQ(s.prefill_backlog_tokens, 0);
  EXPECT_DOUBLE_EQ(s.kv_usage, 0.0);
  EXPECT_EQ(s.num_free_blocks, 10);
  EXPECT_EQ(s.num_total_blocks, 10);
  EXPECT_EQ(s.max_num_seqs, 256);

  e.Submit(Spec(1, 100, 3, 0));
  e.Submit(Spec(2, 30, 3, 1));
  s = e.sched().stats();
  EXPECT_EQ(s.num_waiting, 2);
  EXPECT_EQ(s.waiting_prompt_tokens, 130);
  EXPECT_EQ(s.prefill_backlog_tokens, 130);

  e.Step();  // 1: 64-token chunk (4 blocks); the budget is spent, 2 waits
  s = e.sched().stats();
  EXPECT_EQ(s.num_running, 1);
  EXPECT_EQ(s.num_waiting, 1);
  EXPECT_EQ(s.waiting_prompt_tokens, 30);
  EXPECT_EQ(s.prefill_backlog_tokens, 130);  // the chunk is not computed until the step ends
  EXPECT_DOUBLE_EQ(s.kv_usage, 0.4);
  EXPECT_EQ(s.num_free_blocks, 6);
  e.Done();
  s = e.sched().stats();
  EXPECT_EQ(s.prefill_backlog_tokens, 30 + 36);

  e.Step();  // 1: last 36 tokens (7 blocks); 2: 28-token chunk (2 blocks)
  s = e.sched().stats();
  EXPECT_EQ(s.num_running, 2);
  EXPECT_EQ(s.num_waiting, 0);
  EXPECT_EQ(s.waiting_prompt_tokens, 0);
  EXPECT_EQ(s.prefill_backlog_tokens, 36 + 30);
  EXPECT_DOUBLE_EQ(s.kv_usage, 0.9);
  e.Done();
  s = e.sched().stats();
  EXPECT_EQ(s.prefill_backlog_tokens, 2);

  e.Step();
  e.Done();
  s = e.sched().stats();
  EXPECT_EQ(s.prefill_backlog_tokens, 0);
  EXPECT_GE(s.kv_usage, 0.0);
  EXPECT_LE(s.kv_usage, 1.0);

  e.RunUntilIdle();
  s = e.sched().stats();
  EXPECT_EQ(s.num_running, 0);
  EXPECT_EQ(s.num_waiting, 0);
  EXPECT_EQ(s.waiting_prompt_tokens, 0);
  EXPECT_EQ(s.prefill_backlog_tokens, 0);
  EXPECT_DOUBLE_EQ(s.kv_usage, 0.0);
  EXPECT_EQ(s.num_free_blocks, 10);
  EXPECT_EQ(s.num_preemptions_total, 0);
  EXPECT_EQ(s.num_recomputed_tokens_total, 0);
}

TEST(SchedulerStatsTest, KvUsageMatchesTheBlockManager) {
  FakeEngine e(Config(), 8, 4);
  e.Submit(Spec(1, 9, 4));  // 3 blocks after the prefill
  e.Step();
  EXPECT_DOUBLE_EQ(e.sched().stats().kv_usage, 3.0 / 8.0);
  EXPECT_DOUBLE_EQ(e.sched().stats().kv_usage, e.blocks().usage());
  EXPECT_EQ(e.sched().stats().num_free_blocks, 5);
}

}  // namespace
}  // namespace spillway
