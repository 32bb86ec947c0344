// vLLM's long_prefill_token_threshold and max_long_partial_prefills: while others wait a long
// prompt gets at most the threshold per step (alone, the whole budget), only
// one long prompt prefills per step, and short prompts behind a waiting long one are scheduled
// past it (no head-of-line blocking, issue 12, finding 2).

#include <gtest/gtest.h>

#include "sched/fake_engine.h"
#include "sched/scheduler.h"

namespace spillway {
namespace {

using testing_util::FakeEngine;
using testing_util::FindSeq;
using testing_util::Spec;

SchedulerConfig LongPrefillConfig(std::int32_t threshold) {
  SchedulerConfig c;
  c.max_num_seqs = 16;
  c.max_num_batched_tokens = 256;
  c.long_prefill_token_threshold = threshold;
  c.max_long_partial_prefills = 1;
  return c;
}

TEST(LongPrefillTest, ALongPromptAloneTakesTheWholeBudget) {
  FakeEngine e(LongPrefillConfig(64), 1000, 16);
  e.Submit(Spec(1, 1000, 2));
  const StepPlan p = e.Step();
  ASSERT_EQ(p.seqs.size(), 1u);
  EXPECT_EQ(p.seqs[0].num_new_tokens, 256);  // the cap protects others, it wastes nothing
}

TEST(LongPrefillTest, WhileOthersWaitALongPromptGetsAtMostTheThreshold) {
  FakeEngine e(LongPrefillConfig(64), 1000, 16);
  e.Submit(Spec(1, 1000, 2, 0.0));
  for (RequestId id = 2; id < 12; ++id) {
    e.Submit(Spec(id, 32, 2, 0.1 * static_cast<double>(id)));  // 320 tokens behind it
  }
  const StepPlan p = e.Step();
  ASSERT_NE(FindSeq(p, 1), nullptr);
  EXPECT_EQ(FindSeq(p, 1)->num_new_tokens, 64);
  EXPECT_EQ(p.seqs.size(), 7u);  // and six short prompts in the other 192 tokens
}

TEST(LongPrefillTest, OnlyOneLongPromptPrefillsPerStepAndShortOnesGoPastTheOther) {
  FakeEngine e(LongPrefillConfig(64), 1000, 16);
  e.Submit(Spec(1, 1000, 2, 0.0));  // long, first
  e.Submit(Spec(2, 1000, 2, 0.1));  // long, second: must wait for the long-prefill slot
  e.Submit(Spec(3, 32, 2, 0.2));    // short, behind both
  const StepPlan p = e.Step();
  ASSERT_NE(FindSeq(p, 1), nullptr);
  EXPECT_EQ(FindSeq(p, 1)->num_new_tokens, 64);  // no top-up: the second long one waits
  EXPECT_EQ(FindSeq(p, 2), nullptr) << "a second long prefill in the same step";
  ASSERT_NE(FindSeq(p, 3), nullptr) << "the short prompt was blocked behind a long one";
  EXPECT_EQ(FindSeq(p, 3)->num_new_tokens, 32);
}

TEST(LongPrefillTest, WithoutAThresholdTheFirstLongPromptTakesTheWholeBudget) {
  FakeEngine e(LongPrefillConfig(0), 1000, 16);
  e.Submit(Spec(1, 1000, 2, 0.0));
  e.Submit(Spec(3, 32, 2, 0.2));
  const StepPlan p = e.Step();
  ASSERT_NE(FindSeq(p, 1), nullptr);
  EXPECT_EQ(FindSeq(p, 1)->num_new_tokens, 256);
  EXPECT_EQ(FindSeq(p, 3), nullptr);
}

}  // namespace
}  // namespace spillway
