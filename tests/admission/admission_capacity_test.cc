// What predictive admission knows before and beside its measurements: the KV-limited batch
// (EffectiveSlots), the cold-start service-rate prior (ServiceRateEstimate), the request
// deadline check (deadline_unreachable, or a clamp with degradation on) and the per-policy
// default queue limits.

#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "admission/admission.h"
#include "admission/admission_test_util.h"

namespace spillway {
namespace {

using admission_test::kTol;

/// Predictive, TTFT SLO 1 s, prefill 2000 tokens/s and the given step time; mu_hat as given
/// (0 = not yet measured).
AdmissionConfig PriorConfig(double mu_rps, Seconds step_s = 0.02) {
  AdmissionConfig config;
  config.policy = AdmissionPolicy::kPredictive;
  config.ttft_slo_s = 1.0;
  config.estimator.service_rate_prior_rps = mu_rps;
  config.estimator.prefill_tokens_per_s_prior = 2000;
  config.estimator.step_time_prior_s = step_s;
  return config;
}

/// An engine with a batch of 32 and `blocks` KV blocks of 16 tokens.
EngineStats BatchStats(std::int32_t running, std::int32_t waiting, std::int32_t blocks = 100000) {
  EngineStats s;
  s.max_num_seqs = 32;
  s.num_running = running;
  s.num_waiting = waiting;
  s.num_total_blocks = blocks;
  s.num_free_blocks = blocks;
  s.block_size = 16;
  return s;
}

using admission_test::Request;

// --- EffectiveSlots ---

TEST(EffectiveSlotsTest, IsMaxNumSeqsBeforeAnyRequestWasAdmitted) {
  const AdmissionController c(PriorConfig(10), 0);
  EXPECT_EQ(c.EffectiveSlots(BatchStats(0, 0, /*blocks=*/10)), 32);
}

TEST(EffectiveSlotsTest, IsLimitedByTheKvBlocksAMeanRequestHoldsAtItsEnd) {
  AdmissionController c(PriorConfig(10), 0);
  // 512 + 256 tokens = 48 blocks of 16: a pool of 200 blocks holds 4 such requests.
  ASSERT_TRUE(c.Decide(Request(512, 256), BatchStats(0, 0, 200), 0).admitted());
  EXPECT_EQ(c.EffectiveSlots(BatchStats(0, 0, 200)), 4);
  // A large pool leaves max_num_seqs the limit.
  EXPECT_EQ(c.EffectiveSlots(BatchStats(0, 0, 100000)), 32);
}

TEST(EffectiveSlotsTest, AKvLimitedBatchHasNoFreeSlotsToHideAQueueIn) {
  AdmissionController c(PriorConfig(/*mu=*/2), 0);
  ASSERT_TRUE(c.Decide(Request(512, 256), BatchStats(0, 0, 200), 0).admitted());
  // 4 running fill the 4 KV slots: all 6 waiting requests wait for completions at mu = 2/s.
  EXPECT_NEAR(c.QueueDelayEstimate(BatchStats(4, 6, 200)), 6 / 2.0, kTol);
}

// --- ServiceRateEstimate (cold start) ---

TEST(ServiceRateEstimateTest, IsUnknownBeforeMeasurementsAndRequests) {
  const AdmissionController c(PriorConfig(0), 0);
  EXPECT_EQ(c.ServiceRateEstimate(BatchStats(0, 0)), 0);
}

TEST(ServiceRateEstimateTest, ColdStartPriorTurnsTheBatchOverInItsPrefillAndMeanOutputSteps) {
  AdmissionController c(PriorConfig(0, /*step_s=*/0.02), 0);
  ASSERT_TRUE(c.Decide(Request(100, 50), BatchStats(0, 0), 0).admitted());
  // A batch of 32 turns over in 50 decode steps of 0.02 s plus its 32 x 100 prompt tokens at
  // 2,000 tokens/s: 32 / (1.0 s + 1.6 s) requests/s.
  const double mu = 32.0 / 2.6;
  EXPECT_NEAR(c.ServiceRateEstimate(BatchStats(0, 0)), mu, kTol);
  // ... so 64 requests queued behind a full batch wait 64 / mu, not 0.
  EXPECT_NEAR(c.QueueDelayEstimate(BatchStats(32, 64)), 64 / mu, 1e-6);
}

TEST(ServiceRateEstimateTest, AMeasuredRateReplacesThePrior) {
  AdmissionController c(PriorConfig(/*mu=*/5), 0);
  ASSERT_TRUE(c.Decide(Request(100, 50), BatchStats(0, 0), 0).admitted());
  EXPECT_EQ(c.ServiceRateEstimate(BatchStats(0, 0)), 5);
}

TEST(ServiceRateEstimateTest, ColdStartBurstIsShedInsteadOfAdmittedWholesale) {
  AdmissionController c(PriorConfig(0, /*step_s=*/0.02), 0);
  int admitted = 0;
  EngineStats s = BatchStats(0, 0);
  for (int i = 0; i < 400; ++i) {
    const AdmissionDecision d = c.Decide(Request(64, 64), s, 0);
    if (d.admitted()) {
      ++admitted;
      s.num_waiting += 1;  // nothing runs in this instant: everything admitted waits
    }
  }
  // 32 slots / (64 x 0.02 s) = 25 requests/s: about one TTFT SLO's worth beyond the batch.
  EXPECT_LT(admitted, 100);
  EXPECT_GT(admitted, 32);
}

// --- The request deadline ---

TEST(RequestDeadlineTest, RefusesARequestThatCannotFinishBeforeTheDeadline) {
  AdmissionConfig config = PriorConfig(10, /*step_s=*/0.02);
  config.request_deadline_s = 4.5;
  AdmissionController c(config, 0);
  // 256 tokens x 0.02 s = 5.12 s of decoding alone: more than an idle engine can do, 400.
  const AdmissionDecision d = c.Decide(Request(32, 256), BatchStats(0, 0), 0);
  EXPECT_FALSE(d.admitted());
  EXPECT_EQ(d.verdict, Verdict::kNeverFits);
  EXPECT_EQ(d.max_output_tokens, 201);  // floor((0.9 x 4.5 - 0.02) / 0.02)
  EXPECT_EQ(d.reason, OverloadReason::kMaxTokensExceedsDeadline);
  EXPECT_NEAR(d.decode_est_s, 5.12, 1e-9);
  EXPECT_GE(d.retry_after_s, 1);
  // 128 tokens (2.56 s) fit.
  EXPECT_TRUE(c.Decide(Request(32, 128), BatchStats(0, 0), 0).admitted());
}

TEST(RequestDeadlineTest, ALoadDependentMissIsA429) {
  AdmissionConfig config = PriorConfig(/*mu=*/40, /*step_s=*/0.02);
  config.request_deadline_s = 4.5;
  AdmissionController c(config, 0);
  // 150 tokens fit an idle engine (3 s) but not behind 0.9 s of queue plus a full batch.
  const AdmissionDecision d = c.Decide(Request(32, 190), BatchStats(32, 36), 0);
  EXPECT_EQ(d.verdict, Verdict::kShed);
  EXPECT_EQ(d.reason, OverloadReason::kDeadlineUnreachable);
}

TEST(RequestDeadlineTest, CountsTheQueueDelayAgainstTheDeadline) {
  AdmissionConfig config = PriorConfig(/*mu=*/40, /*step_s=*/0.02);
  config.request_deadline_s = 4.5;
  AdmissionController c(config, 0);
  // 36 queued beyond a full batch at 40/s: W_est 0.9 s; 0.9 + 0.02 + 190 x 0.02 > 0.9 x 4.5.
  EXPECT_TRUE(c.Decide(Request(32, 150), BatchStats(32, 36), 0).admitted());
  EXPECT_EQ(c.Decide(Request(32, 190), BatchStats(32, 36), 0).reason,
            OverloadReason::kDeadlineUnreachable);
}

TEST(RequestDeadlineTest, WithDegradationOnClampsMaxTokensToWhatFitsAtAFullBatch) {
  AdmissionConfig config = PriorConfig(10, /*step_s=*/0.02);
  config.request_deadline_s = 4.5;
  config.degrade_max_tokens = 1000;
  config.decode_step_s_by_batch.assign(32, 0.03);  // a full batch's step: 30 ms
  config.decode_step_s_by_batch[0] = 0.02;
  AdmissionController c(config, 0);
  const AdmissionDecision d = c.Decide(Request(32, 1000), BatchStats(0, 0), 0);
  ASSERT_TRUE(d.admitted());
  EXPECT_EQ(d.verdict, Verdict::kDegrade);
  // floor((0.9 x 4.5 - W_est 0 - prefill 0.02) / 0.03): about 134 tokens fit at a full batch
  // (201 at the idle engine's 20 ms, which the batch that fills meanwhile would overrun).
  EXPECT_EQ(d.max_output_tokens,
            static_cast<std::int32_t>(std::floor((kDeadlineMargin * 4.5 - 0.0 - 0.02) / 0.03)));
  EXPECT_NEAR(d.max_output_tokens, 134, 1);
}

TEST(RequestDeadlineTest, TheClampNeverExceedsDegradeMaxTokens) {
  AdmissionConfig config = PriorConfig(10, /*step_s=*/0.02);
  config.request_deadline_s = 4.5;
  config.degrade_max_tokens = 64;
  AdmissionController c(config, 0);
  const AdmissionDecision d = c.Decide(Request(32, 1000), BatchStats(0, 0), 0);
  ASSERT_TRUE(d.admitted());
  EXPECT_EQ(d.max_output_tokens, 64);
}

TEST(RequestDeadlineTest, UsesTheModelledStepOfTheBatchTheRequestJoins) {
  AdmissionConfig config = PriorConfig(100, /*step_s=*/0.05);  // a pessimistic full-step prior
  config.request_deadline_s = 4.5;
  config.decode_step_s_by_batch.assign(32, 0.03);
  config.decode_step_s_by_batch[0] = 0.015;  // one decode alone
  AdmissionController c(config, 0);
  // Idle: 200 tokens x 15 ms = 3 s fits, though 200 x the 50 ms prior would not.
  const AdmissionDecision idle = c.Decide(Request(32, 200), BatchStats(0, 0), 0);
  EXPECT_TRUE(idle.admitted());
  EXPECT_NEAR(idle.decode_est_s, 3.0, 1e-9);
  // Beside a full batch: 200 x 30 ms = 6 s does not.
  const AdmissionDecision busy = c.Decide(Request(32, 200), BatchStats(31, 0), 0);
  EXPECT_EQ(busy.reason, OverloadReason::kDeadlineUnreachable);
  EXPECT_NEAR(busy.decode_est_s, 6.0, 1e-9);
}

TEST(RequestDeadlineTest, PlansDecodeAtTheEnginesMeasuredPace) {
  // Live, steps on a busy machine ran slower than modelled and requests planned at the
  // model's pace were answered 504 at the deadline: the modelled step x the measured pace.
  AdmissionConfig config = PriorConfig(100, /*step_s=*/0.05);
  config.request_deadline_s = 4.5;
  config.decode_step_s_by_batch.assign(32, 0.02);
  config.decode_step_s_by_batch[0] = 0.015;
  AdmissionController c(config, 0);
  EngineStats busy = BatchStats(15, 0);
  // 150 tokens x 20 ms = 3 s fits at the model's pace...
  const AdmissionDecision modelled = c.Decide(Request(32, 150), busy, 0);
  EXPECT_TRUE(modelled.admitted());
  EXPECT_NEAR(modelled.decode_est_s, 3.0, 1e-9);
  // ...not at 1.5 times slower (4.5 s), which an idle engine at the model's pace would fit
  // (2.25 s): a 429 the retry may pass, not a 400.
  busy.step_pace = 1.5;
  const AdmissionDecision slow = c.Decide(Request(32, 150), busy, 0);
  EXPECT_EQ(slow.reason, OverloadReason::kDeadlineUnreachable);
  EXPECT_NEAR(slow.decode_est_s, 4.5, 1e-9);
}

TEST(RequestDeadlineTest, IsNotCheckedWithoutADeadlineOrOutsidePredictive) {
  AdmissionController none(PriorConfig(10, 0.02), 0);
  EXPECT_TRUE(none.Decide(Request(32, 100000), BatchStats(0, 0), 0).admitted());
  AdmissionConfig tail = PriorConfig(10, 0.02);
  tail.policy = AdmissionPolicy::kTailDrop;
  tail.request_deadline_s = 1;
  AdmissionController tail_drop(tail, 0);
  EXPECT_TRUE(tail_drop.Decide(Request(32, 100000), BatchStats(0, 0), 0).admitted());
}

// --- Defaults ---

TEST(DefaultQueueLimitsTest, AreTheReferenceQmaxForTailDropAndASafetyNetForPredictive) {
  EXPECT_EQ(DefaultMaxNumQueuedReqs(AdmissionPolicy::kTailDrop), 32);
  EXPECT_EQ(DefaultMaxNumQueuedReqs(AdmissionPolicy::kPredictive), 4096);
  EXPECT_EQ(DefaultMaxNumQueuedReqs(AdmissionPolicy::kUnbounded), 0);
}

TEST(OverloadReasonNamesTest, DeadlineUnreachableHasAStableToken) {
  EXPECT_EQ(ToString(OverloadReason::kDeadlineUnreachable), "deadline_unreachable");
}

}  // namespace
}  // namespace spillway
