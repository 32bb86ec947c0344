// The worked examples of ../shared/seeds/overload-and-failure-handling.txt, run through the
// predictive AdmissionController with mu_hat *measured* by its ServiceEstimator from engine
// steps (the lesson's "measured sustained service capacity").

#include <gtest/gtest.h>

#include "admission/admission.h"
#include "admission/step_feeder.h"

namespace spillway {
namespace {

using testing_util::FeederEstimatorConfig;
using testing_util::kStepsPerWindow;
using testing_util::StepFeeder;
using testing_util::WindowSpec;

// The lesson's engine: a 32-token prompt prefills in 15 ms and a 128-token one in 60 ms beside
// running decodes (§5.1, §9 exercise 2), i.e. 2133.3 prefill tokens/s. Decode-only steps never
// re-measure it, so it stays at this prior.
constexpr double kPrefillTokensPerS = 32 / 0.015;

AdmissionConfig LessonConfig() {
  AdmissionConfig config;
  config.policy = AdmissionPolicy::kPredictive;
  config.ttft_slo_s = 1.0;
  config.kv_headroom = 0.85;
  config.estimator = FeederEstimatorConfig();
  config.estimator.prefill_tokens_per_s_prior = kPrefillTokensPerS;
  return config;
}

/// Measures `rps` (a multiple of 2) with saturated windows of engine steps: `windows` x 0.5 s.
void MeasureServiceRate(AdmissionController* controller, int rps, int windows) {
  StepFeeder feeder(controller);
  feeder.RunWindows(windows, {.completions = rps / 2, .saturated_steps = kStepsPerWindow});
  feeder.Settle();
}

TEST(AdmissionLessonExamplesTest, Section5RejectsWithQueueDelayAndKvSaturationRetryAfter5) {
  AdmissionController controller(LessonConfig(), /*now=*/0);
  MeasureServiceRate(&controller, /*rps=*/10, /*windows=*/4);  // 2 s at mu = 10 req/s
  ASSERT_NEAR(controller.estimator().service_rate_rps(), 10.0, 1e-9);

  // §5.1 /metrics at t0: 32 running (the batch is full), 45 waiting, KV 0.88.
  EngineStats stats;
  stats.num_running = 32;
  stats.max_num_seqs = 32;
  stats.num_waiting = 45;
  stats.waiting_prompt_tokens = 45 * 32;
  stats.prefill_backlog_tokens = 45 * 32;
  stats.kv_usage = 0.88;
  // R46: Short Chat, P = 32, N = 64.
  const AdmissionDecision d =
      controller.Decide({.tenant = "", .prompt_tokens = 32, .max_output_tokens = 64}, stats, 2.0);

  EXPECT_NEAR(d.queue_delay_est_s, 4.5, 1e-9);                      // Step 1: 45 / 10
  EXPECT_NEAR(d.prefill_est_s, 0.015, 1e-9);                        // t_prefill
  EXPECT_NEAR(d.queue_delay_est_s + d.prefill_est_s, 4.515, 1e-9);  // Step 2: TTFT_est
  EXPECT_FALSE(d.admitted());
  EXPECT_EQ(d.verdict, Verdict::kShed);
  EXPECT_EQ(d.reason, OverloadReason::kQueueDelayAndKvSaturation);
  EXPECT_EQ(ToString(d.reason), "queue_delay_and_kv_saturation");
  EXPECT_EQ(d.retry_after_s, 5.0);  // ceil(4.5)
  EXPECT_EQ(d.deadline_s, kNever);
}

TEST(AdmissionLessonExamplesTest, Exercise2RejectsOnQueueDelayAloneWhenKvHeadroomPasses) {
  AdmissionController controller(LessonConfig(), /*now=*/0);
  MeasureServiceRate(&controller, /*rps=*/10, /*windows=*/1);
  ASSERT_NEAR(controller.estimator().service_rate_rps(), 10.0, 1e-12);

  // 60 waiting, 40 running (the batch is full), KV 0.82 < 0.85.
  EngineStats stats;
  stats.num_running = 40;
  stats.max_num_seqs = 40;
  stats.num_waiting = 60;
  stats.waiting_prompt_tokens = 60 * 128;
  stats.prefill_backlog_tokens = 60 * 128;
  stats.kv_usage = 0.82;
  // Medium Coding prompt, P = 128: t_prefill_est = 60 ms.
  const AdmissionDecision d =
      controller.Decide({.tenant = "", .prompt_tokens = 128, .max_output_tokens = 256}, stats, 1.0);

  EXPECT_NEAR(d.queue_delay_est_s, 6.0, 1e-9);  // W_est = 60 / 10
  EXPECT_NEAR(d.prefill_est_s, 0.06, 1e-9);
  EXPECT_NEAR(d.queue_delay_est_s + d.prefill_est_s, 6.06, 1e-9);  // TTFT_est
  EXPECT_EQ(d.verdict, Verdict::kShed);
  EXPECT_EQ(d.reason, OverloadReason::kQueueDelayExceeded);  // not kv: 0.82 passes
  EXPECT_EQ(ToString(d.reason), "queue_delay_exceeded");
  EXPECT_EQ(d.retry_after_s, 6.0);
}

TEST(AdmissionLessonExamplesTest, Exercise1RejectsWithRetryAfter30) {
  AdmissionConfig config = LessonConfig();
  config.estimator.prefill_tokens_per_s_prior = 32 / 0.020;  // t_prefill = 20 ms for P = 32
  AdmissionController controller(config, /*now=*/0);
  MeasureServiceRate(&controller, /*rps=*/12, /*windows=*/1);
  ASSERT_NEAR(controller.estimator().service_rate_rps(), 12.0, 1e-12);

  // Q = (36 - 12) x 15 = 360 beyond a full batch.
  EngineStats stats;
  stats.num_running = 32;
  stats.max_num_seqs = 32;
  stats.num_waiting = 360;
  stats.kv_usage = 0.5;
  const AdmissionDecision d =
      controller.Decide({.tenant = "", .prompt_tokens = 32, .max_output_tokens = 64}, stats, 15.0);

  EXPECT_NEAR(d.queue_delay_est_s, 30.0, 1e-9);
  EXPECT_NEAR(d.queue_delay_est_s + d.prefill_est_s, 30.02, 1e-9);
  EXPECT_EQ(d.verdict, Verdict::kShed);
  EXPECT_EQ(d.reason, OverloadReason::kQueueDelayExceeded);
  EXPECT_EQ(d.retry_after_s, 30.0);
}

TEST(AdmissionLessonExamplesTest, OpeningBurstRejectsWithRetryAfter20) {
  AdmissionController controller(LessonConfig(), /*now=*/0);
  MeasureServiceRate(&controller, /*rps=*/10, /*windows=*/1);

  // After 10 s at lambda = 30, mu = 10: Q = 200 waiting behind a full batch.
  EngineStats stats;
  stats.num_running = 32;
  stats.max_num_seqs = 32;
  stats.num_waiting = 200;
  stats.kv_usage = 0.6;
  const AdmissionDecision d =
      controller.Decide({.tenant = "", .prompt_tokens = 32, .max_output_tokens = 64}, stats, 10.0);

  EXPECT_NEAR(d.queue_delay_est_s, 20.0, 1e-9);
  EXPECT_EQ(d.verdict, Verdict::kShed);
  EXPECT_EQ(d.reason, OverloadReason::kQueueDelayExceeded);
  EXPECT_EQ(d.retry_after_s, 20.0);
}

TEST(AdmissionLessonExamplesTest, HealthyEngineAdmitsWithTheQueueIngressDeadline) {
  AdmissionController controller(LessonConfig(), /*now=*/0);
  MeasureServiceRate(&controller, /*rps=*/10, /*windows=*/4);

  // §5.4 healthy column: a few waiting, 16-32 running, KV 0.4-0.7.
  EngineStats stats;
  stats.num_running = 32;
  stats.max_num_seqs = 32;
  stats.num_waiting = 4;
  stats.waiting_prompt_tokens = 4 * 32;
  stats.prefill_backlog_tokens = 4 * 32;
  stats.kv_usage = 0.6;
  const double now = 2.0;
  const AdmissionDecision d =
      controller.Decide({.tenant = "", .prompt_tokens = 32, .max_output_tokens = 64}, stats, now);

  EXPECT_NEAR(d.queue_delay_est_s, 0.4, 1e-9);
  EXPECT_EQ(d.verdict, Verdict::kAdmit);
  EXPECT_TRUE(d.admitted());
  EXPECT_EQ(d.reason, OverloadReason::kNone);
  EXPECT_EQ(d.max_output_tokens, 64);
  EXPECT_NEAR(d.deadline_s, now + (1.0 - 0.015), 1e-9);  // §3.2: now + (SLO - t_prefill_est)
}

}  // namespace
}  // namespace spillway
