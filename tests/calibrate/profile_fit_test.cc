// The profile fit (calibrate/profile_fit.h): points made by a known profile are predicted again
// by the fit from another start, and with the prefills under decode every term comes back;
// with measurement noise the fit stays within it; decode points alone leave mfu to the prior.

#include "calibrate/profile_fit.h"

#include <cmath>
#include <stdexcept>

#include <gtest/gtest.h>

#include "calibrate/calibrate_test_util.h"
#include "calibrate/point_plans.h"
#include "config/profile.h"
#include "executor/cost_model.h"

namespace spillway::calibrate {
namespace {

using calibrate_test::SeedProfile;

// A profile unlike the seed's in every efficiency term: what an engine measures as.
Profile TrueProfile() {
  Profile p = SeedProfile();
  p.mfu = 0.62;
  p.mbu = 0.78;
  p.step_overhead_s = 0.0011;
  p.per_seq_overhead_s = 0.00004;
  p.first_token_overhead_s = 0.0045;
  return p;
}

// The seed profile's engine with a fixed budget of 512 tokens (as a vLLM target's flags say).
EngineConfig FitEngine() { return calibrate_test::FixedBudgetEngine(512); }

// The points `spillway calibrate` would measure (prompts 16..2048, batches 1..128 of 32 + 64
// tokens, the longest prompt beside 1, 4, 16 and 64 streams), with their steps.
struct Measured {
  CalibrationPoints points;
  PointPlans plans;
};

// The points as `truth` runs them, each scaled by (1 + noise x a fixed +-1 pattern).
Measured PointsOf(const Profile& truth, double noise = 0) {
  Measured m;
  for (const std::int32_t n : PromptLadder(2048)) {
    m.points.prefill.push_back({.prompt_tokens = n, .ttft_s = 1, .samples = 3});
  }
  for (const std::int32_t c : ConcurrencyLadder(128)) {
    m.points.decode.push_back({.concurrency = c, .context_tokens = 64, .itl_s = 1, .samples = 9});
  }
  for (const std::int32_t c : {1, 4, 16, 64}) {
    m.points.loaded_prefill.push_back({.prompt_tokens = 2048,
                                       .concurrency = c,
                                       .context_tokens = 40,
                                       .stream_output_tokens = 200,
                                       .ttft_s = 1,
                                       .samples = 3});
  }
  m.plans = PlanPoints(FitEngine(), m.points);
  const Predictions t = Predict(CostModel(truth), m.plans);
  int sign = 1;
  for (std::size_t i = 0; i < t.prefill.size(); ++i, sign = -sign) {
    m.points.prefill[i].ttft_s = t.prefill[i] * (1 + noise * sign);
  }
  for (std::size_t i = 0; i < t.decode.size(); ++i, sign = -sign) {
    m.points.decode[i].itl_s = t.decode[i] * (1 + noise * sign);
  }
  for (std::size_t i = 0; i < t.loaded_prefill.size(); ++i, sign = -sign) {
    m.points.loaded_prefill[i].ttft_s = t.loaded_prefill[i] * (1 + noise * sign);
  }
  return m;
}

TEST(ProfileFitTest, TheTrueProfilePredictsItsOwnPointsExactly) {
  const Measured m = PointsOf(TrueProfile());
  const ProfileFit fit = Evaluate(TrueProfile(), m.points, m.plans);
  EXPECT_LT(fit.max_abs_rel_error, 1e-12);
  EXPECT_EQ(fit.prefill.size(), 8u);
  EXPECT_EQ(fit.decode.size(), 8u);
  EXPECT_EQ(fit.loaded_prefill.size(), 4u);
}

TEST(ProfileFitTest, FromTheSeedProfileTheFitPredictsEveryPointWithinOnePercent) {
  const Measured m = PointsOf(TrueProfile());
  const ProfileFit base = Evaluate(SeedProfile(), m.points, m.plans);
  const ProfileFit fit = FitProfile(SeedProfile(), m.points, m.plans);
  EXPECT_GT(base.max_abs_rel_error, 0.2) << "the start must be far from the truth";
  EXPECT_LT(fit.max_abs_rel_error, 0.01);
  // With the prefills under decode, every term comes back.
  EXPECT_NEAR(fit.profile.mfu, 0.62, 0.62 * 0.02);
  EXPECT_NEAR(fit.profile.mbu, 0.78, 0.78 * 0.02);
  EXPECT_NEAR(fit.profile.step_overhead_s, 0.0011, 0.0011 * 0.05);
  EXPECT_NEAR(fit.profile.per_seq_overhead_s, 0.00004, 0.00004 * 0.1);
  EXPECT_NEAR(fit.profile.first_token_overhead_s, 0.0045, 0.0045 * 0.05);
  // The specifications are the base profile's.
  EXPECT_EQ(fit.profile.peak_flops, SeedProfile().peak_flops);
  EXPECT_EQ(fit.profile.num_params, SeedProfile().num_params);
}

TEST(ProfileFitTest, WithThreePercentNoiseEveryPointStaysWithinFivePercent) {
  const Measured m = PointsOf(TrueProfile(), 0.03);
  const ProfileFit fit = FitProfile(SeedProfile(), m.points, m.plans);
  EXPECT_LT(fit.max_abs_rel_error, 0.05);  // measured: 4.0%
  EXPECT_LT(fit.rms_rel_error, 0.035);
}

TEST(ProfileFitTest, DecodePointsAloneStillFitThoughMfuIsThePriors) {
  Measured m = PointsOf(TrueProfile());
  m.points.prefill.clear();
  m.points.loaded_prefill.clear();
  m.plans.prefill.clear();
  m.plans.loaded_prefill.clear();
  m.plans.loaded_arrival.clear();
  const ProfileFit fit = FitProfile(SeedProfile(), m.points, m.plans);
  EXPECT_LT(fit.max_abs_rel_error, 0.01);
  // No prompt says anything of the compute roof: mfu stays where the prior holds it.
  EXPECT_NEAR(fit.profile.mfu, SeedProfile().mfu, 1e-3);
}

TEST(ProfileFitTest, TooFewOrNonPositivePointsAreRefused) {
  CalibrationPoints points;
  points.prefill.push_back({.prompt_tokens = 16, .ttft_s = 0.01, .samples = 1});
  points.decode.push_back({.concurrency = 1, .context_tokens = 64, .itl_s = 0.01, .samples = 1});
  EXPECT_THROW(FitProfile(SeedProfile(), points, PlanPoints(FitEngine(), points)),
               std::invalid_argument);
  points.decode.push_back({.concurrency = 2, .context_tokens = 64, .itl_s = 0, .samples = 1});
  EXPECT_THROW(FitProfile(SeedProfile(), points, PlanPoints(FitEngine(), points)),
               std::invalid_argument);
}

}  // namespace
}  // namespace spillway::calibrate
