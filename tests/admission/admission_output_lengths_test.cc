// Predictive admission with realistic max_tokens: a cap the client sends is not the length the
// model produces, so the deadline check and the batch size use the output lengths learned from
// completions (issue 14, "Realistic traffic for the predictor").

#include <cstdint>

#include <gtest/gtest.h>

#include "admission/admission.h"
#include "admission/admission_test_util.h"

namespace spillway {
namespace {

using admission_test::Request;

/// Predictive, TTFT SLO 1 s, request deadline 4.5 s, 20 ms steps, mu 10/s, prefill 2000/s;
/// a bucket is trusted after 4 completions.
AdmissionConfig DeadlineConfig() {
  AdmissionConfig config;
  config.policy = AdmissionPolicy::kPredictive;
  config.ttft_slo_s = 1.0;
  config.request_deadline_s = 4.5;
  config.estimator.service_rate_prior_rps = 10;
  config.estimator.prefill_tokens_per_s_prior = 2000;
  config.estimator.step_time_prior_s = 0.02;
  config.output_lengths.min_samples = 4;
  return config;
}

EngineStats Idle() {
  EngineStats s;
  s.max_num_seqs = 32;
  s.num_total_blocks = s.num_free_blocks = 100000;
  s.block_size = 16;
  return s;
}

AdmissionRequest Capped(std::int32_t max_tokens, bool ignore_eos = false) {
  AdmissionRequest r = Request(32, max_tokens);
  r.ignore_eos = ignore_eos;
  return r;
}

TEST(RealisticMaxTokensTest, ACapIsNotALengthBeforeCompletionsSayWhereTheModelStops) {
  AdmissionController c(DeadlineConfig(), 0);
  // 1024 x 20 ms = 20 s if it ran to its cap, but nothing says it will: not checked.
  const AdmissionDecision cold = c.Decide(Capped(1024), Idle(), 0);
  EXPECT_TRUE(cold.admitted());
  EXPECT_EQ(cold.decode_est_s, 0);
  // The model stopped at 100 tokens four times under the same cap: 100 x 20 ms = 2 s fits.
  for (int i = 0; i < 4; ++i) {
    c.OnFinished({1024, 32, false}, 100);
  }
  const AdmissionDecision d = c.Decide(Capped(1024), Idle(), 0);
  EXPECT_TRUE(d.admitted());
  EXPECT_EQ(d.max_output_tokens, 1024);  // the cap is not touched
  EXPECT_NEAR(d.decode_est_s, 100 * 0.02, 1e-9);
}

TEST(RealisticMaxTokensTest, RequestsSeenToRunToTheirCapAreRefusedForWhatTheyWouldNeed) {
  // Four ran to their 1024 cap (finish reason length, or still generating at the deadline):
  // 1024 tokens take 20 s, past the deadline on an idle engine too. No retry helps: 400 with
  // what would fit, as under ignore_eos.
  AdmissionController c(DeadlineConfig(), 0);
  for (int i = 0; i < 4; ++i) {
    c.OnFinished({1024, 32, false}, 1024);
  }
  const AdmissionDecision d = c.Decide(Capped(1024), Idle(), 0);
  EXPECT_EQ(d.reason, OverloadReason::kMaxTokensExceedsDeadline);
  EXPECT_EQ(d.max_output_tokens, 201);  // floor((0.9 x 4.5 - 0.02) / 0.02)
  // 190 tokens fit an idle engine (3.8 s) but not behind 5 requests queued beyond a full
  // batch at mu 10 (W_est 0.5 s): a retry can succeed, 429.
  for (int i = 0; i < 4; ++i) {
    c.OnFinished({190, 32, false}, 190);
  }
  EngineStats busy = Idle();
  busy.num_running = 32;
  busy.num_waiting = 5;
  EXPECT_EQ(c.Decide(Capped(190), busy, 0).reason, OverloadReason::kDeadlineUnreachable);
}

TEST(RealisticMaxTokensTest, ACapThatOnlySomeRunToIsAdmittedWhenTheLoadDoesNotMatter) {
  // Three of four stopped at 50 tokens, one ran to the 1024 cap: a quarter of these requests
  // cannot finish even on an idle engine, but this one may well: admitted, the deadline tells.
  AdmissionController c(DeadlineConfig(), 0);
  for (int i = 0; i < 3; ++i) {
    c.OnFinished({1024, 32, false}, 50);
  }
  c.OnFinished({1024, 32, false}, 1024);
  EXPECT_TRUE(c.Decide(Capped(1024), Idle(), 0).admitted());
}

TEST(RealisticMaxTokensTest, IgnoreEosIsPlannedAtItsMaxTokensWhateverWasLearned) {
  AdmissionController c(DeadlineConfig(), 0);
  for (int i = 0; i < 4; ++i) {
    c.OnFinished({1024, 32, false}, 100);
  }
  EXPECT_EQ(c.Decide(Capped(1024, /*ignore_eos=*/true), Idle(), 0).reason,
            OverloadReason::kMaxTokensExceedsDeadline);
}

TEST(RealisticMaxTokensTest, TheDeadlinePlanUsesAHighQuantileNotTheMean) {
  AdmissionConfig config = DeadlineConfig();
  config.output_lengths.min_samples = 10;
  AdmissionController c(config, 0);
  // Nine stop at 20 tokens, one at 190: mean 37, 90th percentile 20, the 95th 190.
  for (int i = 0; i < 9; ++i) {
    c.OnFinished({256, 32, false}, 20);
  }
  c.OnFinished({256, 32, false}, 190);
  EXPECT_NEAR(c.ExpectedOutput(Capped(256)), 37, 1e-9);
  EXPECT_NEAR(c.Decide(Capped(256), Idle(), 0).decode_est_s, 20 * 0.02, 1e-9);
}

TEST(RealisticMaxTokensTest, TheBatchIsSizedByTheExpectedOutputNotTheCap) {
  AdmissionController c(DeadlineConfig(), 0);
  EngineStats small = Idle();
  small.num_total_blocks = small.num_free_blocks = 200;
  for (int i = 0; i < 4; ++i) {
    c.OnFinished({2048, 32, false}, 96);
  }
  // 32 + 96 tokens = 8 blocks of 16 at its end: 200 blocks hold 25 such requests (a 2048 cap
  // would say 1).
  ASSERT_TRUE(c.Decide(Capped(2048), small, 0).admitted());
  EXPECT_EQ(c.EffectiveSlots(small), 25);
}

}  // namespace
}  // namespace spillway
