// ServiceEstimator: windowed, EWMA-smoothed measurement of the engine's service rate (mu_hat),
// prefill throughput beside decodes, and step time (service_estimator.h, "Algorithm").

#include "admission/service_estimator.h"

#include <cmath>

#include <gtest/gtest.h>

#include "admission/admission_test_util.h"
#include "admission/step_feeder.h"

namespace spillway {
namespace {

using testing_util::FeederEstimatorConfig;
using testing_util::kStepS;
using testing_util::kStepsPerWindow;
using testing_util::StepFeeder;
using testing_util::WindowSpec;

using admission_test::kTol;

/// alpha = 1 - exp(-window_s / time_constant_s), as documented.
double Alpha(const ServiceEstimatorConfig& c) {
  return 1.0 - std::exp(-c.window_s / c.time_constant_s);
}

/// A 0.5 s window in which `completions` requests finish: 2 x completions req/s.
WindowSpec Saturated(int completions) {
  return {.completions = completions, .saturated_steps = kStepsPerWindow};
}
WindowSpec Unsaturated(int completions) {
  return {.completions = completions, .saturated_steps = 0};
}

TEST(ServiceEstimatorTest, ReportsPriorsBeforeAnyStep) {
  ServiceEstimatorConfig config;
  config.service_rate_prior_rps = 7;
  config.prefill_tokens_per_s_prior = 3000;
  config.step_time_prior_s = 0.03;
  const ServiceEstimator est(config);
  EXPECT_EQ(est.service_rate_rps(), 7);
  EXPECT_EQ(est.prefill_tokens_per_s(), 3000);
  EXPECT_EQ(est.step_time_s(), 0.03);
}

TEST(ServiceEstimatorTest, DefaultPriorsAreZeroMeaningUnknown) {
  const ServiceEstimator est;
  EXPECT_EQ(est.service_rate_rps(), 0);
  EXPECT_EQ(est.prefill_tokens_per_s(), 0);
  EXPECT_EQ(est.step_time_s(), 0);
}

TEST(ServiceEstimatorTest, KeepsPriorsWhileTheFirstWindowIsStillOpen) {
  ServiceEstimatorConfig config = FeederEstimatorConfig();
  config.service_rate_prior_rps = 7;
  config.step_time_prior_s = 0.03;
  ServiceEstimator est(config);
  StepFeeder feeder(&est);
  feeder.RunWindow(Saturated(5));  // a full window, but no later step has closed it yet
  EXPECT_EQ(est.service_rate_rps(), 7);
  EXPECT_EQ(est.step_time_s(), 0.03);
}

TEST(ServiceEstimatorTest, FirstSaturatedWindowReplacesThePrior) {
  ServiceEstimatorConfig config = FeederEstimatorConfig();
  config.service_rate_prior_rps = 50;
  ServiceEstimator est(config);
  StepFeeder feeder(&est);
  feeder.RunWindow(Saturated(5));  // 5 completions in 0.5 s
  feeder.Settle();
  EXPECT_NEAR(est.service_rate_rps(), 10.0, kTol);
}

TEST(ServiceEstimatorTest, SaturatedWindowsUpdateMuHatByEwmaWithDocumentedAlpha) {
  const ServiceEstimatorConfig config = FeederEstimatorConfig();
  const double alpha = Alpha(config);
  ServiceEstimator est(config);
  StepFeeder feeder(&est);
  feeder.RunWindow(Saturated(5));  // 10 req/s
  feeder.Settle();
  ASSERT_NEAR(est.service_rate_rps(), 10.0, kTol);
  feeder.RunWindow(Saturated(10));  // 20 req/s
  feeder.Settle();
  const double expected = alpha * 20.0 + (1 - alpha) * 10.0;
  EXPECT_NEAR(est.service_rate_rps(), expected, kTol);
  EXPECT_GT(est.service_rate_rps(), 10.0);
  EXPECT_LT(est.service_rate_rps(), 20.0);
}

TEST(ServiceEstimatorTest, SaturatedWindowWithFewerCompletionsLowersMuHat) {
  const ServiceEstimatorConfig config = FeederEstimatorConfig();
  const double alpha = Alpha(config);
  ServiceEstimator est(config);
  StepFeeder feeder(&est);
  feeder.RunWindow(Saturated(5));  // 10 req/s
  feeder.RunWindow(Saturated(2));  // 4 req/s
  feeder.Settle();
  EXPECT_NEAR(est.service_rate_rps(), alpha * 4.0 + (1 - alpha) * 10.0, kTol);
}

TEST(ServiceEstimatorTest, SteadySaturatedLoadConvergesToTheTrueRate) {
  ServiceEstimator est(FeederEstimatorConfig());
  StepFeeder feeder(&est);
  feeder.RunWindow(Saturated(10));       // starts at 20 req/s
  feeder.RunWindows(200, Saturated(6));  // then 12 req/s for 100 s
  feeder.Settle();
  EXPECT_NEAR(est.service_rate_rps(), 12.0, 1e-6);
}

TEST(ServiceEstimatorTest, UnsaturatedWindowWithFewerCompletionsNeverLowersMuHat) {
  ServiceEstimator est(FeederEstimatorConfig());
  StepFeeder feeder(&est);
  feeder.RunWindow(Saturated(5));  // 10 req/s measured under saturation
  feeder.Settle();
  ASSERT_NEAR(est.service_rate_rps(), 10.0, kTol);
  feeder.RunWindows(20, Unsaturated(1));  // light load: 2 req/s for 10 s
  feeder.Settle();
  EXPECT_NEAR(est.service_rate_rps(), 10.0, kTol);
}

TEST(ServiceEstimatorTest, UnsaturatedWindowWithMoreCompletionsRaisesMuHatByEwma) {
  const ServiceEstimatorConfig config = FeederEstimatorConfig();
  const double alpha = Alpha(config);
  ServiceEstimator est(config);
  StepFeeder feeder(&est);
  feeder.RunWindow(Saturated(5));     // 10 req/s
  feeder.RunWindow(Unsaturated(10));  // 20 req/s without a queue: capacity is at least that
  feeder.Settle();
  EXPECT_NEAR(est.service_rate_rps(), alpha * 20.0 + (1 - alpha) * 10.0, kTol);
}

TEST(ServiceEstimatorTest, UnsaturatedWindowsAreSmoothedBeforeAnySaturatedWindowToo) {
  // Light load only: 4 req/s, then a window where a batch happens to finish together (20 req/s).
  // Unsaturated windows raise mu_hat by the EWMA, not to the raw window rate.
  const ServiceEstimatorConfig config = FeederEstimatorConfig();
  const double alpha = Alpha(config);
  ServiceEstimator est(config);
  StepFeeder feeder(&est);
  feeder.RunWindow(Unsaturated(2));  // 4 req/s
  feeder.Settle();
  const double after_first = est.service_rate_rps();
  ASSERT_GT(after_first, 0.0);
  feeder.RunWindow(Unsaturated(10));  // 20 req/s
  feeder.Settle();
  EXPECT_NEAR(est.service_rate_rps(), alpha * 20.0 + (1 - alpha) * after_first, kTol);
}

TEST(ServiceEstimatorTest, UnsaturatedWindowNeverLowersThePrior) {
  ServiceEstimatorConfig config = FeederEstimatorConfig();
  config.service_rate_prior_rps = 10;
  ServiceEstimator est(config);
  StepFeeder feeder(&est);
  feeder.RunWindows(4, Unsaturated(1));  // 2 req/s
  feeder.Settle();
  EXPECT_NEAR(est.service_rate_rps(), 10.0, kTol);
}

TEST(ServiceEstimatorTest, UnsaturatedWindowGivesALowerBoundWhenNothingIsKnown) {
  ServiceEstimator est(FeederEstimatorConfig());
  StepFeeder feeder(&est);
  feeder.RunWindow(Unsaturated(2));  // 4 req/s
  feeder.Settle();
  EXPECT_GT(est.service_rate_rps(), 0.0);
  EXPECT_LE(est.service_rate_rps(), 4.0 + kTol);
}

TEST(ServiceEstimatorTest, WindowSaturatedForExactlyHalfItsBusyTimeCountsAsSaturated) {
  const ServiceEstimatorConfig config = FeederEstimatorConfig();
  const double alpha = Alpha(config);
  ServiceEstimator est(config);
  StepFeeder feeder(&est);
  feeder.RunWindow(Saturated(5));                                                // 10 req/s
  feeder.RunWindow({.completions = 2, .saturated_steps = kStepsPerWindow / 2});  // 4 req/s
  feeder.Settle();
  EXPECT_NEAR(est.service_rate_rps(), alpha * 4.0 + (1 - alpha) * 10.0, kTol);
}

TEST(ServiceEstimatorTest, WindowSaturatedForLessThanHalfItsBusyTimeCannotLowerMuHat) {
  ServiceEstimator est(FeederEstimatorConfig());
  StepFeeder feeder(&est);
  feeder.RunWindow(Saturated(5));  // 10 req/s
  feeder.RunWindow({.completions = 2, .saturated_steps = kStepsPerWindow / 2 - 1});
  feeder.Settle();
  EXPECT_NEAR(est.service_rate_rps(), 10.0, kTol);
}

TEST(ServiceEstimatorTest, PrefillThroughputIsMeasuredFromStepsThatAlsoDecoded) {
  ServiceEstimator est(FeederEstimatorConfig());
  StepFeeder feeder(&est);
  // 64 prefill tokens beside 32 decodes per 1/128 s step: 8192 tokens/s.
  feeder.RunWindow({.saturated_steps = kStepsPerWindow,
                    .prefill_tokens_per_step = 64,
                    .decode_tokens_per_step = 32});
  feeder.Settle();
  EXPECT_NEAR(est.prefill_tokens_per_s(), 64 / kStepS, 1e-6);
}

TEST(ServiceEstimatorTest, StepsThatPrefilledAllThatWaitedCanOnlyRaisePrefillThroughput) {
  ServiceEstimatorConfig config;
  config.window_s = 1.0;
  config.prefill_tokens_per_s_prior = 5000;
  ServiceEstimator est(config);
  Seconds t = 0;
  // 3 s of short prompts beside decodes: 2 prefill tokens in a 30 ms step (67 tokens/s), the
  // budget far from full. That is how little prefill waited, not how fast it goes.
  for (int i = 0; i < 100; ++i) {
    t += 0.03;
    est.OnStep({.end_s = t, .duration_s = 0.03, .prefill_tokens = 2, .decode_tokens = 30});
  }
  EXPECT_EQ(est.prefill_tokens_per_s(), 5000);
  // Steps whose budget was full (30 prefill tokens per 30 ms: 1000 tokens/s) measure it.
  for (int i = 0; i < 100; ++i) {
    t += 0.03;
    est.OnStep({.end_s = t,
                .duration_s = 0.03,
                .prefill_tokens = 30,
                .decode_tokens = 170,
                .token_budget_full = true});
  }
  EXPECT_LT(est.prefill_tokens_per_s(), 4000) << "lowered, by the 5 s EWMA";
  EXPECT_GT(est.prefill_tokens_per_s(), 1000);
}

TEST(ServiceEstimatorTest, PrefillOnlyStepsDoNotMeasurePrefillThroughput) {
  ServiceEstimatorConfig config = FeederEstimatorConfig();
  config.prefill_tokens_per_s_prior = 2000;
  ServiceEstimator est(config);
  StepFeeder feeder(&est);
  // A prefill alone is far faster than one beside decodes; it must not be mistaken for the
  // throughput a newly admitted request gets.
  feeder.RunWindows(3, {.prefill_tokens_per_step = 512, .decode_tokens_per_step = 0});
  feeder.Settle();
  EXPECT_EQ(est.prefill_tokens_per_s(), 2000);
}

TEST(ServiceEstimatorTest, PrefillThroughputIgnoresTheDurationOfDecodeOnlySteps) {
  ServiceEstimator est(FeederEstimatorConfig());
  StepFeeder feeder(&est);
  // Half the steps decode only, half carry 64 prefill tokens beside decodes.
  for (int i = 0; i < kStepsPerWindow; ++i) {
    StepSample s;
    s.duration_s = kStepS;
    s.end_s = (i + 1) * kStepS;
    s.decode_tokens = 32;
    s.prefill_tokens = i % 2 == 0 ? 64 : 0;
    est.OnStep(s);
  }
  StepSample next;
  next.duration_s = kStepS;
  next.end_s = (kStepsPerWindow + 1) * kStepS;
  next.decode_tokens = 32;
  est.OnStep(next);
  EXPECT_NEAR(est.prefill_tokens_per_s(), 64 / kStepS, 1e-6);
}

TEST(ServiceEstimatorTest, PrefillThroughputFollowsTheEwma) {
  const ServiceEstimatorConfig config = FeederEstimatorConfig();
  const double alpha = Alpha(config);
  ServiceEstimator est(config);
  StepFeeder feeder(&est);
  feeder.RunWindow({.prefill_tokens_per_step = 64});   // 8192 tokens/s
  feeder.RunWindow({.prefill_tokens_per_step = 128});  // 16384 tokens/s
  feeder.Settle();
  EXPECT_NEAR(est.prefill_tokens_per_s(), alpha * 16384 + (1 - alpha) * 8192, 1e-6);
}

TEST(ServiceEstimatorTest, StepTimeIsTheMeanStepDurationOfTheWindow) {
  ServiceEstimatorConfig config = FeederEstimatorConfig();
  config.step_time_prior_s = 0.5;
  ServiceEstimator est(config);
  StepFeeder feeder(&est);
  feeder.RunWindow({});
  feeder.Settle();
  EXPECT_NEAR(est.step_time_s(), kStepS, kTol);
}

TEST(ServiceEstimatorTest, WindowWithoutCompletionsKeepsThePriorServiceRateWhenUnsaturated) {
  ServiceEstimatorConfig config = FeederEstimatorConfig();
  config.service_rate_prior_rps = 9;
  ServiceEstimator est(config);
  StepFeeder feeder(&est);
  feeder.RunWindows(3, Unsaturated(0));
  feeder.Settle();
  EXPECT_EQ(est.service_rate_rps(), 9);
}

TEST(ServiceEstimatorTest, SaturatedWindowWithoutCompletionsMeasuresZeroCapacity) {
  const ServiceEstimatorConfig config = FeederEstimatorConfig();
  const double alpha = Alpha(config);
  ServiceEstimator est(config);
  StepFeeder feeder(&est);
  feeder.RunWindow(Saturated(5));  // 10 req/s
  feeder.RunWindow(Saturated(0));  // stalled (e.g. preemption storm): nothing finishes
  feeder.Settle();
  EXPECT_NEAR(est.service_rate_rps(), (1 - alpha) * 10.0, kTol);
}

TEST(ServiceEstimatorTest, IdleTimeAfterSaturatedStepsDoesNotDeflateMuHat) {
  // Five saturated 0.1 s steps finish one request each (10 req/s at capacity); then the engine
  // is idle for almost 10 s until the next step. Windows are window_s = 1 s of engine time, so
  // the idle gap is not capacity: mu_hat must stay about 10 req/s.
  ServiceEstimatorConfig config;
  config.window_s = 1.0;
  ServiceEstimator est(config);
  for (int i = 0; i < 5; ++i) {
    est.OnStep({.end_s = 0.1 * (i + 1),
                .duration_s = 0.1,
                .decode_tokens = 8,
                .completions = 1,
                .saturated = true});
  }
  est.OnStep({.end_s = 10.05, .duration_s = 0.05, .decode_tokens = 1});
  EXPECT_NEAR(est.service_rate_rps(), 10.0, 0.5);
}

}  // namespace
}  // namespace spillway
