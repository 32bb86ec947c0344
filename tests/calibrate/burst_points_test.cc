// Bursts (calibrate/calibration_points.h BurstPoint): every request offered at once, planned by
// the engine, each request's TTFT and TPOT read off the timed steps, and the points file that
// carries them (calibrate/points_file.h), down to its errors.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "calibrate/calibrate_test_util.h"
#include "calibrate/point_plans.h"
#include "calibrate/points_file.h"
#include "config/config_error.h"
#include "executor/cost_model.h"

namespace spillway::calibrate {
namespace {

// Two prompts of 600 tokens on a budget of 1,000: the first prefills alone, the second beside
// the first's decode; then both decode until the shorter (3 tokens) ends.
BurstPoint TwoPrompts(std::int32_t second_output) {
  BurstPoint b;
  b.source = "two prompts";
  b.prompt_tokens = {600, 600};
  b.output_tokens = {3, second_output};
  b.ttft_median_s = b.tpot_median_s = b.duration_s = 1;
  return b;
}

TEST(BurstPlanTest, EachRequestsTtftAndTpotAreTheStepsItWaitedForAndDecodedIn) {
  CalibrationPoints points;
  points.bursts = {TwoPrompts(5)};
  const EngineConfig engine = calibrate_test::FixedBudgetEngine(1000, 0);
  const PointPlans plans = PlanPoints(engine, points);
  ASSERT_EQ(plans.bursts.size(), 1u);
  const BurstPlan& plan = plans.bursts[0];
  const CostModel model(engine.profile);
  std::vector<Seconds> end;
  Seconds t = 0;
  for (const StepWork& w : plan.steps) {
    end.push_back(t += model.StepTime(w));
  }
  // Request 0: its whole prompt in step 0, then 2 decodes; request 1: 400 tokens in step 0,
  // the rest in step 1 (sampling its first token), then 4 decodes.
  ASSERT_EQ(plan.first_token_step, (std::vector<std::size_t>{0, 1}));
  ASSERT_EQ(plan.last_step, (std::vector<std::size_t>{2, 5}));
  const BurstFigures f = Predict(model, plans).bursts.at(0);
  const Seconds ttft0 = end[0];
  const Seconds ttft1 = end[1];
  EXPECT_NEAR(f.ttft_median_s, (ttft0 + ttft1) / 2, 1e-12);
  const Seconds tpot0 = (end[2] - ttft0) / 2;
  const Seconds tpot1 = (end[5] - ttft1) / 4;
  EXPECT_NEAR(f.tpot_median_s, (tpot0 + tpot1) / 2, 1e-12);
  EXPECT_NEAR(f.duration_s, end.back(), 1e-12);
}

TEST(BurstPlanTest, ARequestWithNoTextCountsTtftZeroAsTheBenchmarkRecordsIt) {
  CalibrationPoints points;
  points.bursts = {TwoPrompts(0)};
  const EngineConfig engine = calibrate_test::FixedBudgetEngine(1000, 0);
  const PointPlans plans = PlanPoints(engine, points);
  const BurstFigures f = Predict(CostModel(engine.profile), plans).bursts.at(0);
  const Seconds first = CostModel(engine.profile).StepTime(plans.bursts[0].steps[0]);
  EXPECT_NEAR(f.ttft_median_s, first / 2, 1e-12);  // median of {first, 0}
  EXPECT_GT(f.tpot_median_s, 0);                   // request 0's alone
}

TEST(BurstPlanTest, ABurstTheEngineCannotHoldIsRefusedByName) {
  CalibrationPoints points;
  BurstPoint b = TwoPrompts(3);
  b.prompt_tokens = {600, 1 << 30};
  points.bursts = {b};
  try {
    PlanPoints(calibrate_test::FixedBudgetEngine(1000, 0), points);
    FAIL() << "planned a prompt longer than the context";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit the engine"), std::string::npos) << e.what();
  }
}

class PointsFileTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& text) {
    std::ofstream(path_) << text;
    return path_.string();
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // The message of the ConfigError loading `text` throws ("" when it loads).
  std::string ErrorOf(const std::string& text) {
    try {
      LoadPointsFile(Write(text));
    } catch (const config::ConfigError& e) {
      return e.what();
    }
    return "";
  }

  std::filesystem::path path_ = std::filesystem::temp_directory_path() /
                                ("points_file_test_" + std::to_string(::getpid()) + ".yaml");
};

TEST_F(PointsFileTest, TheShippedPublicRunsLoadWithTheirEngineAndEveryRequest) {
  const PointsFile h100 = LoadPointsFile(std::string(SPILLWAY_SOURCE_DIR) +
                                         "/profiles/points/h100-llama3-8b-vllm0.5.4.yaml");
  EXPECT_EQ(h100.settings.max_num_batched_tokens, 2048);
  EXPECT_EQ(h100.settings.enable_chunked_prefill, false);
  EXPECT_EQ(h100.settings.max_model_len, 2048);
  EXPECT_NE(h100.engine.find("vLLM 0.5.4"), std::string::npos);
  ASSERT_EQ(h100.points.bursts.size(), 7u);
  // np640: 129,604 prompt and 125,571 output tokens (the file's totals).
  const BurstPoint& np640 = h100.points.bursts.back();
  ASSERT_EQ(np640.prompt_tokens.size(), 640u);
  std::int64_t in = 0;
  std::int64_t out = 0;
  for (std::size_t i = 0; i < 640; ++i) {
    in += np640.prompt_tokens[i];
    out += np640.output_tokens[i];
  }
  EXPECT_EQ(in, 129604);
  EXPECT_EQ(out, 125571);
  EXPECT_NEAR(np640.duration_s, 40.798200353980064, 1e-12);
}

TEST_F(PointsFileTest, ABurstWhoseListsDifferIsNamedWithItsLine) {
  const std::string error = ErrorOf(
      "engine: {max_num_batched_tokens: 2048, max_num_seqs: 256}\n"
      "decode: [{concurrency: 1, itl_s: 0.01}]\n"
      "bursts:\n"
      "  - {ttft_median_s: 0.1, tpot_median_s: 0.01, duration_s: 5,\n"
      "     prompt_tokens: [10, 20], output_tokens: [5]}\n");
  EXPECT_NE(error.find(":5:"), std::string::npos) << error;
  EXPECT_NE(error.find("bursts[0].output_tokens"), std::string::npos) << error;
}

TEST_F(PointsFileTest, UnknownKeysBadValuesAndTooFewPointsAreErrors) {
  const std::string engine = "engine: {max_num_batched_tokens: 2048, max_num_seqs: 256}\n";
  EXPECT_NE(ErrorOf(engine + "decode: [{concurrency: 1, itl_s: 0.01, itl: 2}]\n").find("itl"),
            std::string::npos);
  EXPECT_NE(ErrorOf(engine + "prefill: [{prompt_tokens: 16, ttft_s: -1}]\n").find("ttft_s"),
            std::string::npos);
  EXPECT_NE(ErrorOf("engine: {max_num_seqs: 0, max_num_batched_tokens: 2048}\n"
                    "decode: [{concurrency: 1, itl_s: 0.01}]\n")
                .find("engine.max_num_seqs"),
            std::string::npos);
  EXPECT_NE(ErrorOf(engine + "decode: [{concurrency: 1, itl_s: 0.01}]\n").find("fewer than three"),
            std::string::npos);
  const std::string points =
      "prefill: [{prompt_tokens: 16, ttft_s: 0.01}, {prompt_tokens: 32, "
      "ttft_s: 0.02}]\ndecode: [{concurrency: 1, itl_s: 0.01}]\n";
  EXPECT_EQ(ErrorOf(engine + points), "");
  // The engine the figures were measured on is required, with its budgets, and the hardware
  // and model are --profile's.
  EXPECT_NE(ErrorOf(points).find("engine: required"), std::string::npos);
  EXPECT_NE(ErrorOf("engine: {max_num_seqs: 256}\n" + points)
                .find("engine.max_num_batched_tokens: required"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf("engine: {max_num_batched_tokens: 2048, max_num_seqs: 256, profile: x}\n" + points)
          .find("engine.profile"),
      std::string::npos);
}

TEST_F(PointsFileTest, ABurstNeedsARequestAndADurationPastItsFirstTokens) {
  const std::string head =
      "engine: {max_num_batched_tokens: 2048, max_num_seqs: 256}\nbursts:\n  - {";
  EXPECT_NE(ErrorOf(head + "ttft_median_s: 0.1, tpot_median_s: 0.01, duration_s: 5, "
                           "prompt_tokens: [], output_tokens: []}\n")
                .find("must list at least one request"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + "ttft_median_s: 0.1, tpot_median_s: 0.01, duration_s: 0.05, "
                           "prompt_tokens: [10], output_tokens: [5]}\n")
                .find("duration_s"),
            std::string::npos);
  const PointsFile f = LoadPointsFile(Write(head + "ttft_median_s: 0.1, tpot_median_s: 0.01, "
                                                   "duration_s: 5, prompt_tokens: [10], "
                                                   "output_tokens: [5]}\n"));
  EXPECT_EQ(f.settings.slo_budgets, false);  // the measured engine's budgets, as given
}

TEST_F(PointsFileTest, ADecodePointOfMoreStreamsThanTheEngineRanIsAnError) {
  const std::string error = ErrorOf(
      "engine: {max_num_batched_tokens: 2048, max_num_seqs: 8}\n"
      "prefill: [{prompt_tokens: 16, ttft_s: 0.01}, {prompt_tokens: 32, ttft_s: 0.02}]\n"
      "decode: [{concurrency: 9, itl_s: 0.01}]\n");
  EXPECT_NE(error.find(":3:"), std::string::npos) << error;
  EXPECT_NE(error.find("decode[0].concurrency: must be at most engine.max_num_seqs, 8"),
            std::string::npos)
      << error;
}

TEST_F(PointsFileTest, AContextShorterThanTheStreamsOutputOrABurstWithoutATpotIsAnError) {
  const std::string engine = "engine: {max_num_batched_tokens: 2048, max_num_seqs: 8}\n";
  const std::string prefill =
      "prefill: [{prompt_tokens: 16, ttft_s: 0.01}, {prompt_tokens: 32, ttft_s: 0.02}]\n";
  // decode_output_tokens 64: a mean context of 32 or less is no prompt at all.
  EXPECT_NE(
      ErrorOf(engine + prefill + "decode: [{concurrency: 1, context_tokens: 32, itl_s: 0.01}]\n")
          .find("decode[0].context_tokens: must be more than decode_output_tokens / 2 (32)"),
      std::string::npos);
  EXPECT_EQ(
      ErrorOf(engine + prefill + "decode: [{concurrency: 1, context_tokens: 33, itl_s: 0.01}]\n"),
      "");
  // No request of 2 tokens or more: no gap between tokens for the median TPOT to measure.
  EXPECT_NE(ErrorOf(engine + "bursts:\n  - {ttft_median_s: 0.1, tpot_median_s: 0.01, "
                             "duration_s: 5, prompt_tokens: [10, 20], output_tokens: [0, 1]}\n")
                .find("bursts[0].output_tokens: must have a request of 2 tokens or more"),
            std::string::npos);
}

TEST(PointPlansTest, ADecodePointsContextSetsItsStreamsPrompt) {
  // Without context_tokens the streams' prompt is decode_prompt_tokens (32); with 1,032 their
  // decode's middle is at 1,032 tokens: a prompt of 1,000 and 64 generated.
  CalibrationPoints points;
  points.decode = {{.concurrency = 2, .context_tokens = 0, .itl_s = 0.01, .samples = 1},
                   {.concurrency = 2, .context_tokens = 1032, .itl_s = 0.01, .samples = 1}};
  const PointPlans plans = PlanPoints(calibrate_test::FixedBudgetEngine(4096, 0), points);
  ASSERT_EQ(plans.decode.size(), 2u);
  const std::int64_t short_context = plans.decode[0].seqs.front().num_context_tokens;
  const std::int64_t long_context = plans.decode[1].seqs.front().num_context_tokens;
  EXPECT_NEAR(short_context, 32 + 32, 2);
  EXPECT_NEAR(long_context, 1032, 2);
}

TEST(PointPlansTest, APointThatDoesNotFitIsNamedByListAndIndex) {
  CalibrationPoints points;
  points.prefill = {{.prompt_tokens = 16, .ttft_s = 0.01, .samples = 1},
                    {.prompt_tokens = 1 << 30, .ttft_s = 0.01, .samples = 1}};
  try {
    PlanPoints(calibrate_test::FixedBudgetEngine(1000, 0), points);
    FAIL() << "planned a prompt longer than the context";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("prefill[1] (1073741824 prompt tokens): ", 0), 0u)
        << e.what();
  }
}

}  // namespace
}  // namespace spillway::calibrate
