// Graceful degradation (admission.h, lesson §3.3): above a load threshold an admitted request's
// max_tokens is clamped (verdict kDegrade, e.g. 256 -> 64); below it nothing changes.

#include <cstdint>

#include <gtest/gtest.h>

#include "admission/admission.h"
#include "admission/admission_test_util.h"

namespace spillway {
namespace {

using admission_test::kTol;

/// Predictive, SLO 1 s, mu_hat = 10 req/s, prefill 2000 tokens/s; degrade to 64 tokens when
/// W_est > 0.5 s or KV usage > 0.75.
AdmissionConfig DegradeConfig(AdmissionPolicy policy = AdmissionPolicy::kPredictive) {
  AdmissionConfig config;
  config.policy = policy;
  config.ttft_slo_s = 1.0;
  config.kv_headroom = 0.85;
  config.degrade_max_tokens = 64;
  config.degrade_queue_delay_fraction = 0.5;
  config.degrade_kv_usage = 0.75;
  config.estimator.service_rate_prior_rps = 10;
  config.estimator.prefill_tokens_per_s_prior = 2000;
  config.estimator.step_time_prior_s = 0.01;
  return config;
}

/// `queued` requests behind a full batch of 32 (W_est = queued / 10 s).
EngineStats Load(std::int32_t queued, double kv_usage) {
  EngineStats s;
  s.max_num_seqs = 32;
  s.num_running = 32;
  s.num_waiting = queued;
  s.kv_usage = kv_usage;
  return s;
}

const AdmissionRequest kRequest{.tenant = "", .prompt_tokens = 32, .max_output_tokens = 256};

TEST(AdmissionDegradationTest, ClampsMaxTokensWhenQueueDelayExceedsTheFractionOfTheSlo) {
  AdmissionController c(DegradeConfig(), 0);
  const AdmissionDecision d = c.Decide(kRequest, Load(8, 0.5), 2.0);  // W_est 0.8 s > 0.5 s
  EXPECT_EQ(d.verdict, Verdict::kDegrade);
  EXPECT_TRUE(d.admitted());
  EXPECT_EQ(d.reason, OverloadReason::kNone);
  EXPECT_EQ(d.max_output_tokens, 64);
  EXPECT_NEAR(d.deadline_s, 2.0 + 1.0 - 0.016, kTol);  // still gets its queue deadline
}

TEST(AdmissionDegradationTest, ClampsMaxTokensWhenKvUsageExceedsTheDegradeThreshold) {
  AdmissionController c(DegradeConfig(), 0);
  const AdmissionDecision d = c.Decide(kRequest, Load(0, 0.8), 0);  // below the 0.85 headroom
  EXPECT_EQ(d.verdict, Verdict::kDegrade);
  EXPECT_EQ(d.max_output_tokens, 64);
}

TEST(AdmissionDegradationTest, LeavesMaxTokensAloneBelowBothThresholds) {
  AdmissionController c(DegradeConfig(), 0);
  const AdmissionDecision d = c.Decide(kRequest, Load(4, 0.7), 0);  // W_est 0.4 s, KV 0.7
  EXPECT_EQ(d.verdict, Verdict::kAdmit);
  EXPECT_EQ(d.max_output_tokens, 256);
}

TEST(AdmissionDegradationTest, ThresholdsThemselvesDoNotDegrade) {
  AdmissionController c(DegradeConfig(), 0);
  const AdmissionDecision d = c.Decide(kRequest, Load(5, 0.75), 0);  // W_est 0.5 s, KV 0.75
  EXPECT_NEAR(d.queue_delay_est_s, 0.5, kTol);
  EXPECT_EQ(d.verdict, Verdict::kAdmit);
  EXPECT_EQ(d.max_output_tokens, 256);
}

TEST(AdmissionDegradationTest, NeverRaisesASmallerMaxTokens) {
  AdmissionController c(DegradeConfig(), 0);
  const AdmissionRequest small{.tenant = "", .prompt_tokens = 32, .max_output_tokens = 40};
  const AdmissionDecision d = c.Decide(small, Load(8, 0.8), 0);
  EXPECT_EQ(d.verdict, Verdict::kAdmit);
  EXPECT_EQ(d.max_output_tokens, 40);
}

TEST(AdmissionDegradationTest, IsOffWhenDegradeMaxTokensIsZero) {
  AdmissionConfig config = DegradeConfig();
  config.degrade_max_tokens = 0;
  AdmissionController c(config, 0);
  const AdmissionDecision d = c.Decide(kRequest, Load(8, 0.8), 0);
  EXPECT_EQ(d.verdict, Verdict::kAdmit);
  EXPECT_EQ(d.max_output_tokens, 256);
}

TEST(AdmissionDegradationTest, RejectionTakesPrecedenceOverDegradation) {
  AdmissionController c(DegradeConfig(), 0);
  const AdmissionDecision d = c.Decide(kRequest, Load(20, 0.5), 0);  // W_est 2 s > SLO
  EXPECT_EQ(d.verdict, Verdict::kShed);
  EXPECT_EQ(d.reason, OverloadReason::kQueueDelayExceeded);
}

TEST(AdmissionDegradationTest, AppliesUnderTailDropToo) {
  AdmissionController c(DegradeConfig(AdmissionPolicy::kTailDrop), 0);
  const AdmissionDecision d = c.Decide(kRequest, Load(30, 0.5), 0);  // W_est 3 s
  EXPECT_EQ(d.verdict, Verdict::kDegrade);
  EXPECT_EQ(d.max_output_tokens, 64);
  EXPECT_EQ(d.deadline_s, kNever);
}

}  // namespace
}  // namespace spillway
