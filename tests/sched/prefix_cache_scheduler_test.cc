// The scheduler with prefix caching on: a prompt whose prefix is cached prefills only the rest,
// the backlog counts only what is left to compute, and a preempted request finds its own blocks
// again instead of recomputing them.

#include <cstdint>
#include <memory>
#include <utility>

#include <gtest/gtest.h>

#include "sched/fake_engine.h"

namespace spillway {
namespace {

using testing_util::Config;
using testing_util::FakeEngine;
using testing_util::FindSeq;
using testing_util::Spec;

constexpr bool kPrefixCaching = true;

std::shared_ptr<const PromptSegments> SystemPrompt(std::int32_t tokens, std::uint64_t id) {
  auto s = std::make_shared<PromptSegments>();
  s->segment_tokens = tokens;
  s->ids = {id};
  return s;
}

// A request of `prompt` tokens beginning with the 64-token system prompt `system_prompt`.
RequestSpec WithSystemPrompt(RequestId id, std::int32_t prompt, std::uint64_t system_prompt) {
  RequestSpec spec = Spec(id, prompt, 1);
  spec.prompt_segments = SystemPrompt(64, system_prompt);
  return spec;
}

// Runs request 1, with system prompt 42, to its end: its blocks stay cached.
void CacheTheFirst(FakeEngine& e, std::int32_t prompt = 100) {
  e.Submit(WithSystemPrompt(1, prompt, 42));
  e.RunUntilFinished(1);
}

TEST(PrefixCacheSchedulerTest, ASecondPromptWithTheSamePrefixPrefillsOnlyTheRest) {
  FakeEngine e(Config(), 64, 16, 1.0, kPrefixCaching);
  CacheTheFirst(e);
  e.Submit(WithSystemPrompt(2, 100, 42));
  const StepPlan plan = e.RunStep();
  const ScheduledSeq* s = FindSeq(plan, 2);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->num_context_tokens, 64);  // 4 blocks of the shared 64 tokens
  EXPECT_EQ(s->num_new_tokens, 36);
  const EngineStats stats = e.sched().stats();
  EXPECT_EQ(stats.prefix_cache_queries_total, 200);
  EXPECT_EQ(stats.prefix_cache_hits_total, 64);
}

TEST(PrefixCacheSchedulerTest, PromptsWithOtherSegmentsOrNoneFindNothing) {
  FakeEngine e(Config(), 64, 16, 1.0, kPrefixCaching);
  CacheTheFirst(e);
  e.Submit(WithSystemPrompt(2, 100, 43));
  e.Submit(Spec(3, 100, 1));
  const StepPlan plan = e.RunStep();
  ASSERT_NE(FindSeq(plan, 2), nullptr);
  ASSERT_NE(FindSeq(plan, 3), nullptr);
  EXPECT_EQ(FindSeq(plan, 2)->num_context_tokens, 0);
  EXPECT_EQ(FindSeq(plan, 3)->num_context_tokens, 0);
  EXPECT_EQ(e.sched().stats().prefix_cache_hits_total, 0);
}

TEST(PrefixCacheSchedulerTest, TheLastPromptTokenIsAlwaysComputed) {
  FakeEngine e(Config(), 64, 16, 1.0, kPrefixCaching);
  CacheTheFirst(e, 64);
  e.Submit(WithSystemPrompt(2, 64, 42));  // the same 64 tokens: 3 blocks cached, 4th computed
  const StepPlan plan = e.RunStep();
  const ScheduledSeq* s = FindSeq(plan, 2);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->num_context_tokens, 48);
  EXPECT_EQ(s->num_new_tokens, 16);
  EXPECT_TRUE(s->samples_token);
}

TEST(PrefixCacheSchedulerTest, TheBacklogCountsOnlyThePromptTokensNotCached) {
  FakeEngine e(Config(/*max_num_seqs=*/1), 64, 16, 1.0, kPrefixCaching);
  CacheTheFirst(e);
  e.Submit(Spec(2, 50, 20));  // takes the only slot
  e.RunStep();
  e.Submit(WithSystemPrompt(3, 100, 42));
  EXPECT_EQ(e.sched().stats().waiting_prompt_tokens, 36);
  EXPECT_EQ(e.sched().StatsAhead(0, e.now()).waiting_prompt_tokens, 36);
}

// Two long decodes in a pool too small for both: the later one is preempted; with the cache
// it finds the blocks it had computed when it comes back. Returns the prompt tokens prefilled.
std::int64_t PrefilledTokens(bool prefix_caching, std::int64_t* hits) {
  FakeEngine e(Config(), 12, 4, 1.0, prefix_caching);
  e.Submit(Spec(1, 16, 24, 0.0));
  e.Submit(Spec(2, 16, 24, 0.5));
  e.RunUntilIdle();
  EXPECT_GE(e.Finished(2).num_preemptions, 1);
  EXPECT_EQ(e.Finished(1).num_output_tokens, 24);
  EXPECT_EQ(e.Finished(2).num_output_tokens, 24);
  *hits = e.sched().stats().prefix_cache_hits_total;
  std::int64_t prefilled = 0;
  for (const StepPlan& plan : e.plans()) {
    prefilled += plan.num_prefill_tokens;
  }
  return prefilled;
}

TEST(PrefixCacheSchedulerTest, APreemptedRequestFindsItsOwnBlocksAgain) {
  std::int64_t hits_off = 0;
  std::int64_t hits_on = 0;
  const std::int64_t without = PrefilledTokens(false, &hits_off);
  const std::int64_t with = PrefilledTokens(true, &hits_on);
  EXPECT_EQ(hits_off, 0);
  EXPECT_GT(hits_on, 0);
  EXPECT_EQ(with, without - hits_on);
}

// Priority scheduling, two batch requests sharing a cached 64-token system prompt fill the
// batch (max_num_seqs 2) in a pool of 8 blocks: each holds the 4 shared blocks and 1 of its
// own, 2 are free. An urgent request arriving then may displace one of them only when that
// one's own block makes room for it: the shared blocks stay with the other.
SchedulerConfig TwoSeatsByPriority() {
  SchedulerConfig c;
  c.policy = SchedulingPolicy::kPriority;
  c.max_num_seqs = 2;
  c.reserve_prefill_blocks = false;  // else the urgent request waits for free blocks first
  return c;
}

void FillTheBatchWithSharers(FakeEngine& e) {
  for (const RequestId id : {1, 2}) {
    RequestSpec spec = WithSystemPrompt(id, 70, 42);
    spec.max_output_tokens = 8;
    spec.priority = 1;
    e.Submit(spec);
    e.RunStep();
  }
  ASSERT_EQ(e.sched().stats().num_running, 2);
  ASSERT_EQ(e.blocks().num_free(), 2);
}

TEST(PrefixCacheSchedulerTest, NoDisplacementFreesOnlyBlocksAnotherRequestShares) {
  FakeEngine e(TwoSeatsByPriority(), 8, 16, 1.0, kPrefixCaching);
  FillTheBatchWithSharers(e);
  e.Submit(Spec(3, 64, 4, /*arrival=*/0, /*priority=*/0));  // 4 blocks: 2 free + 1 would not do
  const StepPlan plan = e.RunStep();
  EXPECT_EQ(FindSeq(plan, 3), nullptr);
  EXPECT_NE(FindSeq(plan, 1), nullptr);
  EXPECT_NE(FindSeq(plan, 2), nullptr);
  EXPECT_EQ(e.sched().stats().num_preemptions_total, 0);
}

TEST(PrefixCacheSchedulerTest, ADisplacementWhoseOwnBlocksMakeRoomHappens) {
  FakeEngine e(TwoSeatsByPriority(), 8, 16, 1.0, kPrefixCaching);
  FillTheBatchWithSharers(e);
  e.Submit(Spec(3, 48, 4, /*arrival=*/0, /*priority=*/0));  // 3 blocks: 2 free + 1 do
  const StepPlan plan = e.RunStep();
  EXPECT_NE(FindSeq(plan, 3), nullptr);
  EXPECT_EQ(e.sched().stats().num_preemptions_total, 1);
}

// Backfill past a blocked prompt (reserve_prefill_blocks, max_prefill_bypass_steps 0): two
// running requests share a cached 64-token system prompt in a pool of 16 blocks, request 1
// ends in 4 steps, request 2 in 40; prompt 3 (256 tokens, 16 blocks) waits for the whole
// pool. The shared blocks are freed when request 2 ends, not twice: request 4 (4 blocks at
// its end, running past request 2's) fits no surplus then and must not start before prompt 3.
Seconds BlockedPromptStart(bool with_backfill_candidate) {
  SchedulerConfig c = Config(8, 128);
  FakeEngine e(c, 16, 16, 1.0, kPrefixCaching);
  for (const auto& [id, outputs] : {std::pair<RequestId, std::int32_t>{1, 4}, {2, 40}}) {
    RequestSpec spec = WithSystemPrompt(id, 70, 42);
    spec.max_output_tokens = outputs;
    e.Submit(spec);
    e.RunStep();
  }
  e.Submit(Spec(3, 256, 1));
  if (with_backfill_candidate) {
    e.Submit(Spec(4, 16, 40));
  }
  e.RunUntilIdle();
  return e.Finished(3).first_scheduled_s;
}

TEST(PrefixCacheSchedulerTest, BackfillCountsSharedBlocksFreedOnceByTheirLastHolder) {
  EXPECT_EQ(BlockedPromptStart(true), BlockedPromptStart(false));
}

}  // namespace
}  // namespace spillway
