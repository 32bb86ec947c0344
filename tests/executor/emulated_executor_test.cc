// EmulatedExecutor (emulated_executor.h): the step duration is the cost model's, and it returns
// one deterministic placeholder token in [0, kVocabSize) per sequence that samples a token.

#include "executor/emulated_executor.h"

#include <cstdint>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "config/profile.h"
#include "executor/cost_model.h"
#include "executor/executor_test_util.h"

namespace spillway {
namespace {

using executor_test::SeedProfile;

/// Three decodes, a final prefill chunk and a non-final one.
StepPlan MixedPlan() {
  StepPlan plan;
  plan.seqs.push_back({.id = 1,
                       .num_new_tokens = 1,
                       .num_context_tokens = 40,
                       .samples_token = true,
                       .is_decode = true});
  plan.seqs.push_back({.id = 2,
                       .num_new_tokens = 1,
                       .num_context_tokens = 7,
                       .samples_token = true,
                       .is_decode = true});
  plan.seqs.push_back({.id = 9,
                       .num_new_tokens = 200,
                       .num_context_tokens = 0,
                       .samples_token = false,
                       .is_decode = false});  // more prompt to come
  plan.seqs.push_back({.id = 3,
                       .num_new_tokens = 1,
                       .num_context_tokens = 300,
                       .samples_token = true,
                       .is_decode = true});
  plan.seqs.push_back({.id = 4,
                       .num_new_tokens = 64,
                       .num_context_tokens = 128,
                       .samples_token = true,
                       .is_decode = false});  // last prompt chunk
  plan.num_decode_tokens = 3;
  plan.num_prefill_tokens = 264;
  return plan;
}

TEST(EmulatedExecutorTest, IdentifiesItselfAsEmulatedWithTheProfileName) {
  const EmulatedExecutor executor(SeedProfile());
  EXPECT_TRUE(executor.is_emulated());
  EXPECT_EQ(executor.name(), "emulated:seed-a100-7b");
}

TEST(EmulatedExecutorTest, DurationIsTheCostModelStepTime) {
  EmulatedExecutor executor(SeedProfile());
  const CostModel model(SeedProfile());
  const StepPlan plan = MixedPlan();
  const StepResult result = executor.Run(plan);
  EXPECT_EQ(result.duration_s, model.StepTime(plan));
  EXPECT_EQ(result.duration_s, executor.cost_model().StepTime(plan));
  EXPECT_GT(result.duration_s, 0);
}

TEST(EmulatedExecutorTest, ReturnsOneTokenPerSamplingSequenceInPlanOrder) {
  EmulatedExecutor executor(SeedProfile());
  const StepResult result = executor.Run(MixedPlan());
  ASSERT_EQ(result.token_ids.size(), 4u);  // not for the non-final prefill chunk of id 9
  // Each token is the placeholder at the position it fills: context + new tokens.
  EXPECT_EQ(result.token_ids[0], EmulatedExecutor::PlaceholderToken(1, 41));
  EXPECT_EQ(result.token_ids[1], EmulatedExecutor::PlaceholderToken(2, 8));
  EXPECT_EQ(result.token_ids[2], EmulatedExecutor::PlaceholderToken(3, 301));
  EXPECT_EQ(result.token_ids[3], EmulatedExecutor::PlaceholderToken(4, 192));
}

TEST(EmulatedExecutorTest, RecomputeAfterPreemptionResamplesTheSameToken) {
  // A sequence of 100 tokens decodes its 101st; preempted, it recomputes the 100 tokens in one
  // prefill chunk, whose last token samples the same position: the text does not change.
  EmulatedExecutor executor(SeedProfile());
  StepPlan decode;
  decode.seqs.push_back({.id = 8,
                         .num_new_tokens = 1,
                         .num_context_tokens = 99,
                         .samples_token = true,
                         .is_decode = true});
  decode.num_decode_tokens = 1;
  StepPlan recompute;
  recompute.seqs.push_back({.id = 8,
                            .num_new_tokens = 100,
                            .num_context_tokens = 0,
                            .samples_token = true,
                            .is_decode = false});
  recompute.num_prefill_tokens = 100;
  EXPECT_EQ(executor.Run(decode).token_ids, executor.Run(recompute).token_ids);
}

TEST(EmulatedExecutorTest, NonFinalPrefillChunksSampleNothing) {
  EmulatedExecutor executor(SeedProfile());
  StepPlan plan;
  plan.seqs.push_back({.id = 5,
                       .num_new_tokens = 512,
                       .num_context_tokens = 0,
                       .samples_token = false,
                       .is_decode = false});
  plan.num_prefill_tokens = 512;
  const StepResult result = executor.Run(plan);
  EXPECT_TRUE(result.token_ids.empty());
  EXPECT_GT(result.duration_s, 0);
}

TEST(EmulatedExecutorTest, RunsAreDeterministicAcrossCallsAndInstances) {
  EmulatedExecutor a(SeedProfile());
  EmulatedExecutor b(SeedProfile());
  const StepPlan plan = MixedPlan();
  const StepResult first = a.Run(plan);
  const StepResult again = a.Run(plan);
  const StepResult other = b.Run(plan);
  EXPECT_EQ(first.token_ids, again.token_ids);
  EXPECT_EQ(first.token_ids, other.token_ids);
  EXPECT_EQ(first.duration_s, again.duration_s);
  EXPECT_EQ(first.duration_s, other.duration_s);
}

TEST(EmulatedExecutorTest, PlaceholderTokensAreInTheVocabulary) {
  for (RequestId id : {0ull, 1ull, 2ull, 12345ull, 0xFFFFFFFFFFFFFFFFull}) {
    for (std::int64_t pos = 0; pos < 2000; ++pos) {
      const std::int32_t t = EmulatedExecutor::PlaceholderToken(id, pos);
      ASSERT_GE(t, 0) << id << " " << pos;
      ASSERT_LT(t, EmulatedExecutor::kVocabSize) << id << " " << pos;
    }
  }
}

TEST(EmulatedExecutorTest, PlaceholderTokensAreAFunctionOfIdAndPosition) {
  EXPECT_EQ(EmulatedExecutor::PlaceholderToken(77, 5), EmulatedExecutor::PlaceholderToken(77, 5));
  // Not a constant: positions and requests get varied tokens.
  std::set<std::int32_t> by_position;
  std::set<std::int32_t> by_id;
  for (std::int64_t i = 0; i < 1000; ++i) {
    by_position.insert(EmulatedExecutor::PlaceholderToken(42, i));
    by_id.insert(EmulatedExecutor::PlaceholderToken(static_cast<RequestId>(i), 0));
  }
  EXPECT_GT(by_position.size(), 900u);
  EXPECT_GT(by_id.size(), 900u);
}

}  // namespace
}  // namespace spillway
