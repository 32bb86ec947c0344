// The ladders a calibration walks (calibrate/calibration_points.h) and the engine steps behind
// each point (calibrate/point_plans.h): planned by the engine, chunked and batched as it runs
// them, and timed by the cost model.

#include "calibrate/calibration_points.h"

#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "calibrate/calibrate_test_util.h"
#include "calibrate/point_plans.h"
#include "executor/cost_model.h"

namespace spillway::calibrate {
namespace {

// The budget of 1,000 tokens, without the long-prefill rule.
EngineConfig FixedBudgetEngine(std::int32_t budget) {
  return calibrate_test::FixedBudgetEngine(budget, 0);
}

CalibrationPoints SomePoints() {
  CalibrationPoints points;
  points.prefill = {{.prompt_tokens = 300, .ttft_s = 1, .samples = 1},
                    {.prompt_tokens = 2500, .ttft_s = 1, .samples = 1}};
  points.decode = {{.concurrency = 8, .context_tokens = 64, .itl_s = 1, .samples = 1}};
  points.loaded_prefill = {{.prompt_tokens = 2000,
                            .concurrency = 4,
                            .context_tokens = 40,
                            .stream_output_tokens = 64,
                            .ttft_s = 1,
                            .samples = 1}};
  return points;
}

TEST(PointPlansTest, ALonePromptIsChunkedAtTheBudgetAndItsLastChunkSamples) {
  const PointPlans plans = PlanPoints(FixedBudgetEngine(1000), SomePoints());
  ASSERT_EQ(plans.prefill.size(), 2u);
  ASSERT_EQ(plans.prefill[0].size(), 1u);
  EXPECT_EQ(plans.prefill[0][0].num_prefill_tokens, 300);
  ASSERT_EQ(plans.prefill[1].size(), 3u);
  EXPECT_EQ(plans.prefill[1][0].seqs[0].num_new_tokens, 1000);
  EXPECT_EQ(plans.prefill[1][1].seqs[0].num_context_tokens, 1000);
  EXPECT_EQ(plans.prefill[1][2].seqs[0].num_new_tokens, 500);
  EXPECT_TRUE(plans.prefill[1][2].seqs[0].samples_token);
  EXPECT_FALSE(plans.prefill[1][1].seqs[0].samples_token);
}

TEST(PointPlansTest, ADecodePointIsAStepOfTheWholeBatchDecoding) {
  const PointPlans plans = PlanPoints(FixedBudgetEngine(1000), SomePoints());
  ASSERT_EQ(plans.decode.size(), 1u);
  EXPECT_EQ(plans.decode[0].seqs.size(), 8u);
  EXPECT_EQ(plans.decode[0].num_decode_tokens, 8);
  EXPECT_EQ(plans.decode[0].num_prefill_tokens, 0);
}

TEST(PointPlansTest, APromptBesideDecodesGetsWhatTheBudgetLeavesThemEachStep) {
  const PointPlans plans = PlanPoints(FixedBudgetEngine(1000), SomePoints());
  ASSERT_EQ(plans.loaded_prefill.size(), 1u);
  EXPECT_EQ(plans.loaded_arrival[0].num_decode_tokens, 4);
  const std::vector<StepPlan>& steps = plans.loaded_prefill[0];
  ASSERT_EQ(steps.size(), 3u);  // 996 + 996 + 8 tokens
  for (const StepPlan& p : steps) {
    EXPECT_EQ(p.num_decode_tokens, 4);
  }
  EXPECT_EQ(steps[0].num_prefill_tokens, 996);
  EXPECT_EQ(steps[2].num_prefill_tokens, 8);
  EXPECT_GE(steps[0].seqs.front().num_context_tokens, 40);
}

TEST(PointPlansTest, PredictionsAreTheStepsTimesUnderTheModel) {
  const PointPlans plans = PlanPoints(FixedBudgetEngine(1000), SomePoints());
  Profile p = FixedBudgetEngine(1000).profile;
  p.first_token_overhead_s = 0.005;
  const CostModel model(p);
  const Predictions predicted = Predict(model, plans);
  EXPECT_DOUBLE_EQ(predicted.prefill[1], StepsTime(model, plans.prefill[1]));
  EXPECT_DOUBLE_EQ(predicted.decode[0], model.StepTime(plans.decode[0]));
  EXPECT_DOUBLE_EQ(predicted.loaded_prefill[0], model.StepTime(plans.loaded_arrival[0]) / 2 +
                                                    StepsTime(model, plans.loaded_prefill[0]));
  // The first-token overhead is in each prompt's TTFT once.
  p.first_token_overhead_s = 0;
  EXPECT_NEAR(predicted.prefill[1] - Predict(CostModel(p), plans).prefill[1], 0.005, 1e-12);
}

TEST(PointPlansTest, APromptLongerThanTheEngineTakesIsRefused) {
  CalibrationPoints points;
  points.prefill = {{.prompt_tokens = 100000, .ttft_s = 1, .samples = 1}};
  EXPECT_THROW(PlanPoints(FixedBudgetEngine(1000), points), std::invalid_argument);
}

TEST(LadderTest, PromptsDoubleFromSixteenToTheLongest) {
  EXPECT_EQ(PromptLadder(100), (std::vector<std::int32_t>{16, 32, 64, 100}));
  EXPECT_EQ(PromptLadder(64), (std::vector<std::int32_t>{16, 32, 64}));
  EXPECT_EQ(PromptLadder(16), (std::vector<std::int32_t>{16}));
  EXPECT_THROW(PromptLadder(15), std::invalid_argument);
}

TEST(LadderTest, BatchesDoubleFromOneToTheCap) {
  EXPECT_EQ(ConcurrencyLadder(1), (std::vector<std::int32_t>{1}));
  EXPECT_EQ(ConcurrencyLadder(6), (std::vector<std::int32_t>{1, 2, 4, 6}));
  EXPECT_EQ(ConcurrencyLadder(8), (std::vector<std::int32_t>{1, 2, 4, 8}));
  EXPECT_THROW(ConcurrencyLadder(0), std::invalid_argument);
}

}  // namespace
}  // namespace spillway::calibrate
