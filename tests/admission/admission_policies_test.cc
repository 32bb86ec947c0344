// AdmissionController policies (admission.h): unbounded, tail-drop and predictive; the queue
// delay and prefill estimates they use; Retry-After; queue-ingress deadlines.

#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "admission/admission.h"
#include "admission/admission_test_util.h"

namespace spillway {
namespace {

using admission_test::kTol;

/// A controller whose estimator starts from known priors (mu_hat, prefill tokens/s, step time).
AdmissionConfig Config(AdmissionPolicy policy, double mu_rps = 10, double prefill_tps = 2000,
                       Seconds step_s = 0.01) {
  AdmissionConfig config;
  config.policy = policy;
  config.ttft_slo_s = 1.0;
  config.kv_headroom = 0.85;
  config.estimator.service_rate_prior_rps = mu_rps;
  config.estimator.prefill_tokens_per_s_prior = prefill_tps;
  config.estimator.step_time_prior_s = step_s;
  return config;
}

/// A full batch of 32 with `waiting` requests of `prompt` tokens behind it.
EngineStats Stats(std::int32_t waiting, double kv_usage = 0.5, std::int32_t prompt = 32) {
  EngineStats s;
  s.max_num_seqs = 32;
  s.num_running = 32;
  s.num_waiting = waiting;
  s.waiting_prompt_tokens = static_cast<std::int64_t>(waiting) * prompt;
  s.prefill_backlog_tokens = s.waiting_prompt_tokens;
  s.kv_usage = kv_usage;
  return s;
}

using admission_test::Request;

// --- QueueDelayEstimate and PrefillEstimate ---

TEST(QueueDelayEstimateTest, IsZeroWhenNothingWaits) {
  const AdmissionController c(Config(AdmissionPolicy::kPredictive), 0);
  EngineStats s = Stats(0);
  s.prefill_backlog_tokens = 100000;  // a running prefill, but nobody waits
  EXPECT_EQ(c.QueueDelayEstimate(s), 0);
}

TEST(QueueDelayEstimateTest, IsQueuedOverMuHatBehindAFullBatch) {
  const AdmissionController c(Config(AdmissionPolicy::kPredictive, /*mu=*/8), 0);
  EXPECT_NEAR(c.QueueDelayEstimate(Stats(20)), 20 / 8.0, kTol);
}

TEST(QueueDelayEstimateTest, CountsOnlyWaitingRequestsBeyondTheFreeBatchSlots) {
  const AdmissionController c(Config(AdmissionPolicy::kPredictive, /*mu=*/10), 0);
  EngineStats s = Stats(30);
  s.num_running = 20;  // 12 free slots: 12 of the 30 start at the next step
  EXPECT_NEAR(c.QueueDelayEstimate(s), 18 / 10.0, kTol);
}

TEST(QueueDelayEstimateTest, UsesThePrefillBacklogWhenItDominates) {
  const AdmissionController c(Config(AdmissionPolicy::kPredictive, /*mu=*/10, /*tps=*/1000), 0);
  EngineStats s = Stats(5);
  s.prefill_backlog_tokens = 3000;  // 3 s of prefill vs 0.5 s of completions
  EXPECT_NEAR(c.QueueDelayEstimate(s), 3.0, kTol);
}

TEST(QueueDelayEstimateTest, WaitingThatFitsInFreeSlotsCostsOnlyThePrefillBacklog) {
  const AdmissionController c(Config(AdmissionPolicy::kPredictive, /*mu=*/10, /*tps=*/1000), 0);
  EngineStats s = Stats(4);
  s.num_running = 10;  // 22 free slots
  s.prefill_backlog_tokens = 500;
  EXPECT_NEAR(c.QueueDelayEstimate(s), 0.5, kTol);
}

TEST(QueueDelayEstimateTest, IsInfiniteWhenRequestsWaitForCompletionsAndNoRateIsKnown) {
  const AdmissionController c(Config(AdmissionPolicy::kPredictive, 0, 0, 0), 0);
  EXPECT_EQ(c.QueueDelayEstimate(Stats(3)), kNever);
}

TEST(QueueDelayEstimateTest, IsZeroWhenWaitingFitsInFreeSlotsAndNoRateIsKnown) {
  const AdmissionController c(Config(AdmissionPolicy::kPredictive, 0, 0, 0), 0);
  EngineStats s = Stats(3);
  s.num_running = 0;
  EXPECT_EQ(c.QueueDelayEstimate(s), 0);
}

TEST(QueueDelayEstimateTest, CountsOnlyTheRequestsQueuedAheadWhenTheStatsSayWhich) {
  AdmissionController c(Config(AdmissionPolicy::kPredictive, /*mu=*/10, /*tps=*/1000), 0);
  EngineStats s = Stats(40);  // 40 waiting behind a full batch: 4 s
  s.num_waiting_ahead = 5;    // an urgent class overtakes 35 of them (Scheduler::StatsAhead)
  s.prefill_backlog_ahead_tokens = 160;
  EXPECT_NEAR(c.QueueDelayEstimate(s), 0.5, kTol);
  s.num_waiting_ahead = 0;
  EXPECT_EQ(c.QueueDelayEstimate(s), 0) << "nothing ahead";
  const AdmissionDecision d = c.Decide(Request(), s, 0);
  EXPECT_EQ(d.verdict, Verdict::kAdmit) << "an urgent request is not refused for the queue "
                                           "behind it";
}

TEST(PrefillEstimateTest, IsPromptOverPrefillThroughput) {
  const AdmissionController c(Config(AdmissionPolicy::kPredictive, 10, 2000, 0.01), 0);
  EXPECT_NEAR(c.PrefillEstimate(512), 512 / 2000.0, kTol);
}

TEST(PrefillEstimateTest, IsAtLeastOneStep) {
  const AdmissionController c(Config(AdmissionPolicy::kPredictive, 10, 2000, 0.03), 0);
  EXPECT_NEAR(c.PrefillEstimate(8), 0.03, kTol);
}

// --- unbounded ---

TEST(UnboundedPolicyTest, AdmitsEverythingEvenWithAHugeQueueAndFullKv) {
  AdmissionController c(Config(AdmissionPolicy::kUnbounded), 0);
  const EngineStats s = Stats(1'000'000, /*kv_usage=*/1.0);
  for (int i = 0; i < 100; ++i) {
    const AdmissionDecision d = c.Decide(Request(4000, 4000), s, i * 0.01);
    ASSERT_EQ(d.verdict, Verdict::kAdmit);
    EXPECT_TRUE(d.admitted());
    EXPECT_EQ(d.reason, OverloadReason::kNone);
    EXPECT_EQ(d.max_output_tokens, 4000);
    EXPECT_EQ(d.deadline_s, kNever);  // no queue deadline unless asked for
  }
}

// An explicit hard limit holds under the naive queue too (vLLM's --max-num-queued-reqs on a
// plain engine): unbounded only means no policy of its own.
TEST(UnboundedPolicyTest, AnExplicitHardLimitStillHolds) {
  AdmissionConfig config = Config(AdmissionPolicy::kUnbounded);
  config.max_num_queued_reqs = 3;
  config.max_num_queued_tokens = 300;
  AdmissionController c(config, 0);
  EXPECT_EQ(c.Decide(Request(), Stats(3), 0).reason, OverloadReason::kQueueFull);
  EXPECT_EQ(c.Decide(Request(250, 4), Stats(2), 0).reason, OverloadReason::kQueuedTokensFull);
  EXPECT_TRUE(c.Decide(Request(100, 4), Stats(2), 0).admitted());
  // A prompt over the token bound on its own still enters an empty queue (a 503 would be
  // retried for ever), and only then.
  EXPECT_TRUE(c.Decide(Request(400, 4), Stats(0), 0).admitted());
  EXPECT_EQ(c.Decide(Request(400, 4), Stats(1), 0).reason, OverloadReason::kQueuedTokensFull);
}

TEST(UnboundedPolicyTest, AdmitsEvenWhenTheServiceRateIsUnknown) {
  AdmissionController c(Config(AdmissionPolicy::kUnbounded, 0, 0, 0), 0);
  EXPECT_TRUE(c.Decide(Request(), Stats(500), 0).admitted());
}

TEST(QueueDeadlineTest, UnboundedStampsItWhenAskedTo) {
  AdmissionConfig config = Config(AdmissionPolicy::kUnbounded, 10, 2000, 0.01);
  config.queue_deadline = true;
  AdmissionController c(config, 0);
  const AdmissionDecision d = c.Decide(Request(100), Stats(1000), 3.0);
  ASSERT_TRUE(d.admitted());
  EXPECT_NEAR(d.deadline_s, 3.0 + (1.0 - 0.05), kTol);
}

// --- tail-drop ---

TEST(TailDropPolicyTest, Rejects503QueueFullAtMaxNumQueuedReqs) {
  AdmissionConfig config = Config(AdmissionPolicy::kTailDrop);
  config.max_num_queued_reqs = 32;
  AdmissionController c(config, 0);
  EXPECT_TRUE(c.Decide(Request(), Stats(31), 0).admitted());
  const AdmissionDecision d = c.Decide(Request(), Stats(32), 0);
  EXPECT_EQ(d.verdict, Verdict::kHardLimit);
  EXPECT_EQ(d.reason, OverloadReason::kQueueFull);
  EXPECT_EQ(c.Decide(Request(), Stats(500), 0).reason, OverloadReason::kQueueFull);
}

TEST(TailDropPolicyTest, Rejects503QueuedTokensFullWhenThePromptWouldExceedTheTokenLimit) {
  AdmissionConfig config = Config(AdmissionPolicy::kTailDrop);
  config.max_num_queued_tokens = 1000;
  AdmissionController c(config, 0);
  EngineStats s = Stats(3);
  s.waiting_prompt_tokens = 900;
  EXPECT_TRUE(c.Decide(Request(/*prompt=*/100), s, 0).admitted());  // exactly at the limit
  const AdmissionDecision d = c.Decide(Request(/*prompt=*/101), s, 0);
  EXPECT_EQ(d.verdict, Verdict::kHardLimit);
  EXPECT_EQ(d.reason, OverloadReason::kQueuedTokensFull);
}

TEST(TailDropPolicyTest, AdmitsBelowTheLimitsWhateverTheQueueDelay) {
  AdmissionConfig config = Config(AdmissionPolicy::kTailDrop, /*mu=*/1);
  config.max_num_queued_reqs = 200;
  AdmissionController c(config, 0);
  // W_est = 199 s and KV nearly full: tail-drop does not look (lesson §2.1).
  const AdmissionDecision d = c.Decide(Request(), Stats(199, /*kv_usage=*/0.99), 0);
  EXPECT_EQ(d.verdict, Verdict::kAdmit);
  EXPECT_EQ(d.deadline_s, kNever);
}

TEST(TailDropPolicyTest, ZeroLimitsMeanNoLimit) {
  AdmissionController c(Config(AdmissionPolicy::kTailDrop), 0);
  EXPECT_TRUE(c.Decide(Request(100000), Stats(1'000'000), 0).admitted());
}

TEST(TailDropPolicyTest, QueueFullRetryAfterIsTheQueueDelayInWholeSeconds) {
  AdmissionConfig config = Config(AdmissionPolicy::kTailDrop, /*mu=*/10);
  config.max_num_queued_reqs = 25;
  AdmissionController c(config, 0);
  const AdmissionDecision d = c.Decide(Request(), Stats(25), 0);  // W_est = 2.5 s
  ASSERT_EQ(d.reason, OverloadReason::kQueueFull);
  EXPECT_EQ(d.retry_after_s, 3.0);
}

// --- predictive ---

TEST(PredictivePolicyTest, AdmitsWhenQueueDelayPlusPrefillMeetsTheSlo) {
  AdmissionController c(Config(AdmissionPolicy::kPredictive, /*mu=*/10, 2000, 0.01), 0);
  const AdmissionDecision d = c.Decide(Request(/*prompt=*/100), Stats(5), 7.0);
  EXPECT_EQ(d.verdict, Verdict::kAdmit);
  EXPECT_TRUE(d.admitted());
  EXPECT_NEAR(d.queue_delay_est_s, 0.5, kTol);
  EXPECT_NEAR(d.prefill_est_s, 0.05, kTol);
}

TEST(PredictivePolicyTest, StampsDeadlineNowPlusSloMinusPrefillEstimate) {
  AdmissionController c(Config(AdmissionPolicy::kPredictive, /*mu=*/10, 2000, 0.01), 0);
  const AdmissionDecision d = c.Decide(Request(/*prompt=*/400), Stats(2), 12.5);
  ASSERT_TRUE(d.admitted());
  EXPECT_NEAR(d.prefill_est_s, 0.2, kTol);
  EXPECT_NEAR(d.deadline_s, 12.5 + (1.0 - 0.2), kTol);
}

TEST(PredictivePolicyTest, APromptWhosePrefillOutlastsTheSloIsJudgedOnlyOnTheQueueAhead) {
  // 3,000 tokens at 2,000 tokens/s: 1.5 s of prefill against a 1 s TTFT SLO.
  AdmissionController c(Config(AdmissionPolicy::kPredictive, /*mu=*/10, 2000, 0.01), 0);
  EngineStats idle = Stats(0);
  idle.num_running = 0;
  const AdmissionDecision d = c.Decide(Request(/*prompt=*/3000), idle, 4.0);
  EXPECT_EQ(d.verdict, Verdict::kAdmit) << "its length is not overload";
  EXPECT_NEAR(d.prefill_est_s, 1.5, kTol);
  EXPECT_NEAR(d.deadline_s, 4.0 + 0.5, kTol) << "half the SLO to start";
  const AdmissionDecision queued = c.Decide(Request(/*prompt=*/3000), Stats(5), 5.0);
  EXPECT_EQ(queued.verdict, Verdict::kShed) << "a queue ahead of it is";
  EXPECT_EQ(queued.reason, OverloadReason::kQueueDelayExceeded);
}

TEST(PredictivePolicyTest, AdmitsAtExactlyTheSloAndRejectsJustAbove) {
  // Binary-exact numbers: mu = 8, 4 queued -> W = 0.5; one 1/128 s step of prefill.
  const Seconds step = 1.0 / 128;
  AdmissionConfig config = Config(AdmissionPolicy::kPredictive, /*mu=*/8, /*tps=*/0, step);
  config.ttft_slo_s = 0.5 + step;
  AdmissionController at_slo(config, 0);
  EXPECT_EQ(at_slo.Decide(Request(), Stats(4), 0).verdict, Verdict::kAdmit);

  config.ttft_slo_s = 0.5 + step / 2;
  AdmissionController above_slo(config, 0);
  const AdmissionDecision d = above_slo.Decide(Request(), Stats(4), 0);
  EXPECT_EQ(d.verdict, Verdict::kShed);
  EXPECT_EQ(d.reason, OverloadReason::kQueueDelayExceeded);
}

TEST(PredictivePolicyTest, RejectsKvSaturationAloneWhenTheQueueDelayIsFine) {
  AdmissionController c(Config(AdmissionPolicy::kPredictive), 0);
  const AdmissionDecision d = c.Decide(Request(), Stats(1, /*kv_usage=*/0.9), 0);
  EXPECT_EQ(d.verdict, Verdict::kShed);
  EXPECT_EQ(d.reason, OverloadReason::kKvSaturation);
  EXPECT_EQ(d.retry_after_s, 1.0);
  EXPECT_EQ(d.deadline_s, kNever);
}

TEST(PredictivePolicyTest, KvUsageExactlyAtTheHeadroomIsAdmitted) {
  AdmissionConfig config = Config(AdmissionPolicy::kPredictive);
  config.kv_headroom = 0.75;
  AdmissionController c(config, 0);
  EXPECT_TRUE(c.Decide(Request(), Stats(0, /*kv_usage=*/0.75), 0).admitted());
  EXPECT_EQ(c.Decide(Request(), Stats(0, /*kv_usage=*/0.76), 0).reason,
            OverloadReason::kKvSaturation);
}

TEST(PredictivePolicyTest, RejectsWithRetryAfterOneWhenRequestsQueueAndNoRateIsKnown) {
  AdmissionController c(Config(AdmissionPolicy::kPredictive, 0, 0, 0), 0);
  const AdmissionDecision d = c.Decide(Request(), Stats(3), 0);
  EXPECT_EQ(d.queue_delay_est_s, kNever);
  EXPECT_EQ(d.reason, OverloadReason::kQueueDelayExceeded);
  EXPECT_EQ(d.retry_after_s, 1.0);
}

TEST(PredictivePolicyTest, AlsoEnforcesTheHardQueueLimitsWith503) {
  AdmissionConfig config = Config(AdmissionPolicy::kPredictive, /*mu=*/1000);
  config.max_num_queued_reqs = 8;
  config.max_num_queued_tokens = 10000;
  AdmissionController c(config, 0);
  const AdmissionDecision full = c.Decide(Request(), Stats(8), 0);  // W_est only 8 ms
  EXPECT_EQ(full.verdict, Verdict::kHardLimit);
  EXPECT_EQ(full.reason, OverloadReason::kQueueFull);

  EngineStats s = Stats(2);
  s.waiting_prompt_tokens = 9990;
  const AdmissionDecision tokens = c.Decide(Request(/*prompt=*/11), s, 0);
  EXPECT_EQ(tokens.verdict, Verdict::kHardLimit);
  EXPECT_EQ(tokens.reason, OverloadReason::kQueuedTokensFull);
}

TEST(QueueDeadlineTest, LeavesHalfTheSloToStartForAPrefillLongerThanIt) {
  AdmissionConfig config = Config(AdmissionPolicy::kTailDrop, 10, 100);
  config.queue_deadline = true;
  AdmissionController c(config, 0);
  const AdmissionDecision d = c.Decide(Request(/*prompt=*/1000), Stats(0), 4.0);  // 10 s
  ASSERT_TRUE(d.admitted());
  EXPECT_EQ(d.deadline_s, 4.5);
}

// --- Retry-After ---

TEST(RetryAfterTest, IsTheQueueDelayRoundedUpToWholeSeconds) {
  AdmissionController c(Config(AdmissionPolicy::kPredictive, /*mu=*/10), 0);
  for (const std::int32_t queued : {11, 15, 20, 21, 99, 100, 101}) {
    const AdmissionDecision d = c.Decide(Request(), Stats(queued), 0);
    ASSERT_FALSE(d.admitted()) << queued;
    EXPECT_EQ(d.retry_after_s, std::ceil(queued / 10.0)) << queued;
    EXPECT_EQ(d.retry_after_s, std::floor(d.retry_after_s)) << queued;
  }
}

TEST(RetryAfterTest, IsAtLeastOneSecond) {
  AdmissionConfig config = Config(AdmissionPolicy::kPredictive, /*mu=*/100);
  config.ttft_slo_s = 0.05;
  AdmissionController c(config, 0);
  const AdmissionDecision d = c.Decide(Request(), Stats(5), 0);  // W_est < 0.1 s
  ASSERT_EQ(d.reason, OverloadReason::kQueueDelayExceeded);
  EXPECT_EQ(d.retry_after_s, 1.0);
}

TEST(RetryAfterTest, AdmittedDecisionsCarryNoRetryAfter) {
  AdmissionController c(Config(AdmissionPolicy::kPredictive), 0);
  const AdmissionDecision d = c.Decide(Request(), Stats(0), 0);
  ASSERT_TRUE(d.admitted());
  EXPECT_EQ(d.retry_after_s, 0);
}

}  // namespace
}  // namespace spillway
