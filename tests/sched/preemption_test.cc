// Preemption by recompute with a tiny KV pool: the victim is the running request with the
// lowest priority, then the latest arrival (vLLM's rule); it returns to the waiting queue with
// no KV and later recomputes its prompt plus the tokens it already generated; the
// max_preemptions cap makes a request fail fast with kPreemptionLimit.
//
// All pools here use 4-token blocks so block boundaries are easy to follow.

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

constexpr std::int32_t kBlock = 4;

SchedulerConfig PreemptionConfig(SchedulingPolicy policy = SchedulingPolicy::kFcfs,
                                 std::int32_t max_num_seqs = 256, std::int32_t max_batched = 2048,
                                 std::int32_t max_preemptions = 0) {
  SchedulerConfig c;
  c.max_num_seqs = max_num_seqs;
  c.max_num_batched_tokens = max_batched;
  c.policy = policy;
  c.max_preemptions = max_preemptions;
  // These tests drive preemption itself (chunk-by-chunk growth, re-admission on one chunk's
  // blocks, the cap), which the prefill block reservation exists to avoid: off here
  // (tests/engine/recompute_thrash_test.cc tests it).
  c.reserve_prefill_blocks = false;
  return c;
}

// Two requests with 4-token prompts in a 4-block pool: after step k (k >= 1) each holds
// ceil((4 + k) / 4) blocks, so at step 5 both need a third block and none is free.
TEST(SchedulerPreemptionTest, SamePriorityPreemptsTheLatestArrivalByRecompute) {
  FakeEngine e(PreemptionConfig(), 4, kBlock);
  e.Submit(Spec(1, 4, 8, /*arrival=*/0));
  e.Submit(Spec(2, 4, 8, /*arrival=*/1, /*priority=*/0, /*deadline=*/2.0));
  for (int step = 0; step < 5; ++step) {
    EXPECT_EQ(Ids(e.RunStep()), (std::vector<RequestId>{1, 2})) << "step " << step;
  }
  EXPECT_EQ(e.sched().stats().num_preemptions_total, 0);
  EXPECT_EQ(e.blocks().num_free(), 0);

  StepPlan p = e.Step();  // t=5: 1 needs a block; 2 (later arrival) is preempted
  EXPECT_EQ(Ids(p), (std::vector<RequestId>{1}));
  const Request* victim = e.sched().Find(2);
  ASSERT_NE(victim, nullptr);
  EXPECT_EQ(victim->state, RequestState::kPreempted);
  EXPECT_EQ(victim->num_computed_tokens, 0);
  EXPECT_TRUE(victim->blocks.empty());
  EXPECT_EQ(victim->num_preemptions, 1);
  EXPECT_EQ(victim->num_output_tokens, 5);
  EXPECT_EQ(victim->num_recomputed_tokens, 8);  // its KV (4 prompt + 4 decoded) is discarded
  EXPECT_EQ(e.Live(1).state, RequestState::kRunning);
  EXPECT_EQ(e.Live(1).blocks.size(), 3u);
  EngineStats s = e.sched().stats();
  EXPECT_EQ(s.num_preemptions_total, 1);
  EXPECT_EQ(s.num_recomputed_tokens_total, 8);
  EXPECT_EQ(s.num_running, 1);
  EXPECT_EQ(s.num_waiting, 1);
  EXPECT_EQ(s.waiting_prompt_tokens, 4 + 5);  // prompt plus generated tokens to recompute
  EXPECT_EQ(s.num_free_blocks, 1);
  e.Done();

  // 2 needs 3 blocks to recompute 9 tokens; only 1 is free until 1 finishes.
  e.RunUntilFinished(1);
  EXPECT_EQ(e.Finished(1).finish_reason, FinishReason::kLength);
  EXPECT_EQ(e.Finished(1).num_preemptions, 0);
  EXPECT_EQ(e.Live(2).state, RequestState::kPreempted);

  // Re-admitted past its queue deadline (it was scheduled before): recomputes 4 + 5 tokens as
  // one prefill from scratch and samples its sixth token.
  p = e.Step();
  const ScheduledSeq* seq = FindSeq(p, 2);
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(seq->num_new_tokens, 9);
  EXPECT_EQ(seq->num_context_tokens, 0);
  EXPECT_TRUE(seq->samples_token);
  EXPECT_FALSE(seq->is_decode);
  EXPECT_EQ(p.num_prefill_tokens, 9);
  EXPECT_EQ(e.Live(2).state, RequestState::kRunning);
  e.Done();
  ASSERT_EQ(e.last_done_tokens().size(), 1u);
  EXPECT_EQ(e.last_done_tokens()[0].index, 5);

  e.RunUntilIdle();
  const Request& f = e.Finished(2);
  EXPECT_EQ(f.finish_reason, FinishReason::kLength);
  EXPECT_EQ(f.num_output_tokens, 8);
  EXPECT_EQ(f.num_preemptions, 1);
  EXPECT_EQ(f.num_recomputed_tokens, 8);
  EXPECT_DOUBLE_EQ(f.first_scheduled_s, 0.0);  // the first scheduling time is kept
  // Every output index is delivered exactly once despite the recompute.
  const std::vector<TokenEvent> toks = e.TokensOf(2);
  ASSERT_EQ(toks.size(), 8u);
  for (std::size_t i = 0; i < toks.size(); ++i) {
    EXPECT_EQ(toks[i].index, static_cast<std::int32_t>(i));
  }
  EXPECT_EQ(e.blocks().num_free(), 4);
  EXPECT_EQ(e.sched().stats().num_preemptions_total, 1);
}

TEST(SchedulerPreemptionTest, LowerPriorityIsPreemptedBeforeLaterArrival) {
  FakeEngine e(PreemptionConfig(), 4, kBlock);
  e.Submit(Spec(1, 4, 8, /*arrival=*/0, /*priority=*/1));
  e.Submit(Spec(2, 4, 8, /*arrival=*/1, /*priority=*/0));
  for (int step = 0; step < 5; ++step) {
    EXPECT_EQ(Ids(e.RunStep()), (std::vector<RequestId>{1, 2}));
  }
  // 1 needs a block first; it has the lowest priority, so it preempts itself.
  const StepPlan p = e.Step();
  EXPECT_EQ(Ids(p), (std::vector<RequestId>{2}));
  EXPECT_EQ(e.Live(1).state, RequestState::kPreempted);
  EXPECT_EQ(e.Live(1).num_recomputed_tokens, 8);
  EXPECT_EQ(e.Live(2).state, RequestState::kRunning);
  EXPECT_EQ(e.Live(2).blocks.size(), 3u);
  e.Done();
  e.RunUntilIdle();
  EXPECT_EQ(e.Finished(1).num_preemptions, 1);
  EXPECT_EQ(e.Finished(2).num_preemptions, 0);
  EXPECT_EQ(e.Finished(1).finish_reason, FinishReason::kLength);
  EXPECT_EQ(e.Finished(1).num_output_tokens, 8);
}

TEST(SchedulerPreemptionTest, VictimAmongSeveralIsTheLowestPriorityThenLatestArrival) {
  // Four 4-token prompts in a 6-block pool; all cross into their second block at step 1.
  FakeEngine e(PreemptionConfig(), 6, kBlock);
  e.Submit(Spec(1, 4, 3, 0.0, /*priority=*/0));
  e.Submit(Spec(2, 4, 3, 1.0, /*priority=*/2));
  e.Submit(Spec(3, 4, 3, 2.0, /*priority=*/2));
  e.Submit(Spec(4, 4, 3, 3.0, /*priority=*/1));
  EXPECT_EQ(Ids(e.RunStep()), (std::vector<RequestId>{1, 2, 3, 4}));
  ASSERT_EQ(e.blocks().num_free(), 2);
  // Step 1: 1 and 2 take the two free blocks; 3 finds none and is itself the worst of {3, 4}
  // (priority 2 beats 4's priority 1), so it preempts itself; 4 then takes its block.
  const StepPlan p = e.Step();
  EXPECT_EQ(Ids(p), (std::vector<RequestId>{1, 2, 4}));
  EXPECT_EQ(e.Live(3).state, RequestState::kPreempted);
  EXPECT_EQ(e.sched().stats().num_preemptions_total, 1);
  e.Done();
  e.RunUntilIdle();
  for (RequestId id = 1; id <= 4; ++id) {
    EXPECT_EQ(e.Finished(id).finish_reason, FinishReason::kLength) << id;
  }
}

// Regression test. scheduler.h promises vLLM's rule: the victim is the lowest-priority, then
// latest-arrival request among ALL running requests (vLLM v1, priority policy: max(running,
// key=(priority, arrival_time)), un-scheduling the victim if it was already scheduled this
// step). Commit 3a5a970's Scheduler::ScheduleRunning only looked at the requester and the
// requests after it in running order, so here the urgent request 2 preempted itself while the
// less urgent request 1, planned earlier in the same step, kept running.
TEST(SchedulerPreemptionTest, VictimIsLowestPriorityEvenIfAlreadyScheduledThisStep) {
  FakeEngine e(PreemptionConfig(SchedulingPolicy::kPriority), 2, kBlock);
  e.Submit(Spec(1, 2, 10, /*arrival=*/0, /*priority=*/1));  // less urgent, admitted first
  e.RunStep();                                              // t=0: 1 holds one block
  e.Submit(Spec(2, 4, 10, /*arrival=*/0.5, /*priority=*/0));
  EXPECT_EQ(Ids(e.RunStep()), (std::vector<RequestId>{1, 2}));  // t=1: pool full
  ASSERT_EQ(e.blocks().num_free(), 0);
  // t=2: 1 fits its third token in its block and is planned; 2 needs a second block for its
  // fifth token. The victim must be 1 (priority 1), taken back out of the plan.
  const StepPlan p = e.Step();
  EXPECT_EQ(e.sched().stats().num_preemptions_total, 1);
  EXPECT_EQ(e.StateOf(1), RequestState::kPreempted)
      << "the priority-1 request should be the victim, not the priority-0 one";
  EXPECT_EQ(e.StateOf(2), RequestState::kRunning);
  EXPECT_EQ(Ids(p), (std::vector<RequestId>{2}));
  EXPECT_EQ(p.num_decode_tokens, 1);
  EXPECT_EQ(p.num_prefill_tokens, 0);
  EXPECT_EQ(e.Live(1).num_computed_tokens, 0);
  EXPECT_TRUE(e.Live(1).blocks.empty());
  EXPECT_EQ(e.Live(2).blocks.size(), 2u);
  e.Done();
  ASSERT_EQ(e.last_done_tokens().size(), 1u);  // no token for the un-planned victim
  EXPECT_EQ(e.last_done_tokens()[0].id, 2u);
  EXPECT_EQ(e.Live(1).num_output_tokens, 2);
}

// 8-token blocks, a 3-block pool and a 4-token budget. At t=5 request 1 (priority 1) is
// planned first (a decode inside its block), then 2 (priority 0) needs a second block: 1 is
// the victim and comes out of the plan, and its token of budget goes to 3's prefill chunk.
TEST(SchedulerPreemptionTest, PlannedVictimIsRemovedFromThePlanAndItsBudgetReturned) {
  FakeEngine e(PreemptionConfig(SchedulingPolicy::kPriority, 256, /*max_batched=*/4), 3, 8);
  e.Submit(Spec(1, 1, 20, /*arrival=*/0, /*priority=*/1));
  e.RunStep();
  e.Submit(Spec(2, 7, 20, /*arrival=*/0.5, /*priority=*/0));
  e.Submit(Spec(3, 20, 5, /*arrival=*/0.6, /*priority=*/0));
  for (int step = 1; step <= 4; ++step) {
    e.RunStep();
  }
  EXPECT_EQ(Ids(e.plans().back()), (std::vector<RequestId>{1, 2, 3}));
  EXPECT_EQ(e.plans().back().seqs[2].num_new_tokens, 2);  // 4 - two decodes
  ASSERT_EQ(e.blocks().num_free(), 0);

  const StepPlan p = e.Step();  // t=5
  EXPECT_EQ(e.StateOf(1), RequestState::kPreempted);
  ASSERT_EQ(Ids(p), (std::vector<RequestId>{2, 3}));
  EXPECT_TRUE(p.seqs[0].is_decode);
  EXPECT_EQ(p.seqs[1].num_new_tokens, 3);  // 1's returned token goes to the chunk
  EXPECT_EQ(p.num_decode_tokens, 1);
  EXPECT_EQ(p.num_prefill_tokens, 3);
  EXPECT_EQ(p.num_tokens(), 4);
  e.Done();
  e.RunUntilIdle();
  EXPECT_EQ(e.finished().size(), 3u);
  EXPECT_EQ(e.blocks().num_free(), 3);
}

TEST(SchedulerPreemptionTest, NoWaitingRequestIsAdmittedInAStepThatPreempted) {
  FakeEngine e(PreemptionConfig(SchedulingPolicy::kFcfs, /*max_num_seqs=*/2), 4, kBlock);
  e.Submit(Spec(1, 4, 8, 0));
  e.Submit(Spec(2, 4, 8, 1));
  e.Submit(Spec(3, 1, 1, 1.5));  // tiny: it would fit in the block left over at step 5
  for (int step = 0; step < 5; ++step) {
    e.RunStep();
  }
  const StepPlan p = e.Step();
  EXPECT_EQ(Ids(p), (std::vector<RequestId>{1}));
  EXPECT_EQ(e.StateOf(2), RequestState::kPreempted);
  EXPECT_EQ(e.blocks().num_free(), 1);
  EXPECT_EQ(e.StateOf(3), RequestState::kWaiting);
  e.Done();
  e.RunUntilIdle();
  EXPECT_EQ(e.finished().size(), 3u);
}

TEST(SchedulerPreemptionTest, SingleRunningRequestThatOutgrowsThePoolPreemptsItselfThenFails) {
  // 2 blocks = 8 tokens; at step 5 the request needs a ninth token of KV: no other request can
  // give up a block, so it is its own victim and releases everything. Its recompute (9 tokens)
  // can never fit, so at the next Step it fails with kPreemptionLimit (scheduler.h, step 4).
  FakeEngine e(PreemptionConfig(), 2, kBlock);
  e.Submit(Spec(1, 4, 6));
  for (int step = 0; step < 5; ++step) {
    e.RunStep();
  }
  ASSERT_EQ(e.StateOf(1), RequestState::kRunning);
  const StepPlan p = e.Step();
  EXPECT_TRUE(p.empty());
  EXPECT_EQ(e.StateOf(1), RequestState::kPreempted);
  EXPECT_EQ(e.Live(1).num_recomputed_tokens, 8);
  EXPECT_EQ(e.blocks().num_free(), 2);
  EXPECT_EQ(e.sched().num_running(), 0);
  EXPECT_EQ(e.sched().num_waiting(), 1);
  e.Done();
  EXPECT_TRUE(e.Step().empty());
  ASSERT_TRUE(e.IsFinished(1));
  const Request& f = e.Finished(1);
  EXPECT_EQ(f.finish_reason, FinishReason::kPreemptionLimit);
  EXPECT_EQ(f.num_output_tokens, 5);
  EXPECT_EQ(f.num_preemptions, 1);
  EXPECT_TRUE(e.sched().idle());
  EXPECT_EQ(e.blocks().num_free(), 2);
}

// Chunked prefill with a 4-token budget and a 4-block pool. Request 2 (priority 1) is
// preempted at step 5 when 1 (priority 0) needs a block, is re-admitted at step 6 with a
// 3-token recompute chunk that fits the one free block, and at step 7 its next chunk finds no
// block: it is the only candidate, so it preempts itself a second time.
struct CapScenario {
  explicit CapScenario(std::int32_t max_preemptions)
      : e(PreemptionConfig(SchedulingPolicy::kFcfs, 256, 4, max_preemptions), 4, kBlock) {
    e.Submit(Spec(1, 4, 9, /*arrival=*/0, /*priority=*/0));
    e.Submit(Spec(2, 6, 10, /*arrival=*/0.5, /*priority=*/1));
  }
  FakeEngine e;
};

TEST(SchedulerPreemptionTest, PreemptionCapFinishesTheRequestWithPreemptionLimit) {
  CapScenario sc(/*max_preemptions=*/1);
  FakeEngine& e = sc.e;
  for (int step = 0; step < 5; ++step) {
    e.RunStep();
  }
  e.Step();  // t=5: first preemption of 2, within the cap
  ASSERT_EQ(e.StateOf(2), RequestState::kPreempted);
  EXPECT_EQ(e.Live(2).num_preemptions, 1);
  e.Done();
  StepPlan p = e.Step();  // t=6: 2 is re-admitted with a recompute chunk
  const ScheduledSeq* seq = FindSeq(p, 2);
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(seq->num_new_tokens, 3);
  EXPECT_EQ(seq->num_context_tokens, 0);
  EXPECT_FALSE(seq->samples_token);
  e.Done();
  p = e.Step();  // t=7: second preemption exceeds the cap
  EXPECT_EQ(Ids(p), (std::vector<RequestId>{1}));
  ASSERT_TRUE(e.IsFinished(2));
  ASSERT_EQ(e.last_step_finished().size(), 1u);
  const Request& f = e.Finished(2);
  EXPECT_EQ(f.finish_reason, FinishReason::kPreemptionLimit);
  EXPECT_EQ(f.state, RequestState::kFinished);
  EXPECT_EQ(f.num_preemptions, 2);
  EXPECT_EQ(f.num_recomputed_tokens, 8 + 3);
  EXPECT_DOUBLE_EQ(f.finished_s, 7.0);
  EXPECT_TRUE(f.blocks.empty());
  EXPECT_EQ(e.sched().Find(2), nullptr);
  EngineStats s = e.sched().stats();
  EXPECT_EQ(s.num_preemptions_total, 2);
  EXPECT_EQ(s.num_recomputed_tokens_total, 11);
  EXPECT_EQ(s.num_waiting, 0);
  EXPECT_EQ(s.waiting_prompt_tokens, 0);
  EXPECT_EQ(s.num_free_blocks, 4 - static_cast<std::int32_t>(e.Live(1).blocks.size()));
  e.Done();
  e.RunUntilIdle();
  EXPECT_EQ(e.Finished(1).finish_reason, FinishReason::kLength);
  EXPECT_EQ(e.blocks().num_free(), 4);
}

TEST(SchedulerPreemptionTest, WithoutCapTheSameRequestSurvivesRepeatedPreemption) {
  CapScenario sc(/*max_preemptions=*/0);
  sc.e.RunUntilIdle();
  const Request& f = sc.e.Finished(2);
  EXPECT_EQ(f.finish_reason, FinishReason::kLength);
  EXPECT_EQ(f.num_output_tokens, 10);
  EXPECT_GE(f.num_preemptions, 2);
  EXPECT_EQ(sc.e.Finished(1).finish_reason, FinishReason::kLength);
  EXPECT_EQ(sc.e.blocks().num_free(), 4);
}

TEST(SchedulerPreemptionTest, CapEqualToPreemptionCountIsNotExceeded) {
  CapScenario sc(/*max_preemptions=*/2);
  sc.e.RunUntilIdle();
  const Request& f = sc.e.Finished(2);
  EXPECT_EQ(f.num_preemptions, 2);
  EXPECT_EQ(f.finish_reason, FinishReason::kLength);
}

TEST(SchedulerPreemptionTest, AbortOfPreemptedRequestRemovesItFromTheWaitingQueue) {
  FakeEngine e(PreemptionConfig(), 4, kBlock);
  e.Submit(Spec(1, 4, 8, 0));
  e.Submit(Spec(2, 4, 8, 1));
  for (int step = 0; step < 6; ++step) {
    e.RunStep();
  }
  ASSERT_EQ(e.StateOf(2), RequestState::kPreempted);
  EXPECT_TRUE(e.sched().Abort(2));
  e.Step();
  ASSERT_TRUE(e.IsFinished(2));
  EXPECT_EQ(e.Finished(2).finish_reason, FinishReason::kAbort);
  EXPECT_EQ(e.sched().num_waiting(), 0);
  EXPECT_EQ(e.sched().stats().waiting_prompt_tokens, 0);
  e.Done();
  e.RunUntilIdle();
  EXPECT_EQ(e.blocks().num_free(), 4);
}

}  // namespace
}  // namespace spillway
