// The profile `spillway calibrate` writes (calibrate/calibrated_profile.h) reads back with the
// fitted terms and the base profile's specifications, and records its points and fit.

#include "calibrate/calibrated_profile.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "calibrate/calibrate_test_util.h"
#include "calibrate/profile_fit.h"
#include "config/profile.h"

namespace spillway::calibrate {
namespace {

CalibrationRecord ARecord() {
  CalibrationRecord r;
  r.target = "http://127.0.0.1:8000";
  r.model = "seed-7b";
  r.measured_at = "2026-12-05T07:00:00Z";
  r.command = "spillway calibrate --target http://127.0.0.1:8000 --out 'my profile.yaml'";
  r.base_profile = "seed-a100-7b";
  r.points.prefill = {{.prompt_tokens = 16, .ttft_s = 0.0131, .samples = 3},
                      {.prompt_tokens = 2048, .ttft_s = 0.1502, .samples = 3}};
  r.points.decode = {{.concurrency = 1, .context_tokens = 64, .itl_s = 0.0121, .samples = 63},
                     {.concurrency = 64, .context_tokens = 64, .itl_s = 0.0183, .samples = 4032}};
  r.engine = PlannedEngine{.max_num_batched_tokens = 1024,
                           .max_num_seqs = 27,
                           .long_prefill_token_threshold = 0,
                           .slo_budgets = true,
                           .source = "scenarios/seed-burst.yaml"};
  Profile base = calibrate_test::SeedProfile();
  PointPlans plans;
  plans.prefill = {{}, {}};
  plans.decode = {StepPlan{}, StepPlan{}};
  r.base_fit = Evaluate(base, r.points, plans);
  base.mfu = 0.4321;
  base.first_token_overhead_s = 0.00123;
  r.fit = Evaluate(base, r.points, plans);
  r.tpot_slo_s = 0.035;
  r.largest_batch_within_slo = 64;
  r.capacity = CapacityRecord{.scenario = "scenarios/seed-burst.yaml",
                              .mu_rps = 7.25,
                              .at_search_ceiling = false,
                              .binding_slo = "ttft",
                              .live_check_verdict = "pass",
                              .live_check_evidence = "p95 TTFT 812 ms vs 790 ms: \"quoted\""};
  return r;
}

TEST(CalibratedProfileTest, ReadsBackWithTheFittedTermsAndTheBaseSpecifications) {
  const std::string yaml = CalibratedProfileYaml(ARecord(), "lab-a100", "fitted", "vLLM 0.6.3");
  const Profile p = LoadProfileFromString(yaml, "lab-a100.yaml");
  EXPECT_EQ(p.name, "lab-a100");
  EXPECT_EQ(p.engine, "vLLM 0.6.3");
  EXPECT_EQ(p.mfu, 0.4321);
  EXPECT_EQ(p.first_token_overhead_s, 0.00123);
  const Profile base = calibrate_test::SeedProfile();
  EXPECT_EQ(p.peak_flops, base.peak_flops);
  EXPECT_EQ(p.num_params, base.num_params);
  EXPECT_EQ(p.max_model_len, base.max_model_len);
  EXPECT_EQ(p.num_gpu_blocks(), base.num_gpu_blocks());
}

TEST(CalibratedProfileTest, RecordsEveryPointItsPredictionTheFitAndMu) {
  const CalibrationRecord r = ARecord();
  const YAML::Node root = YAML::Load(CalibratedProfileYaml(r, "lab-a100", "fitted", ""));
  const YAML::Node c = root["calibration"];
  EXPECT_EQ(root["engine"].as<std::string>(), "seed-7b") << "no --engine: the target's model";
  EXPECT_EQ(c["command"].as<std::string>(), r.command);
  EXPECT_EQ(c["engine_plans"]["max_num_batched_tokens"].as<int>(), 1024);
  EXPECT_EQ(c["engine_plans"]["from"].as<std::string>(), "scenarios/seed-burst.yaml");
  ASSERT_EQ(c["prefill"].size(), 2u);
  EXPECT_EQ(c["prefill"][1]["prompt_tokens"].as<int>(), 2048);
  EXPECT_DOUBLE_EQ(c["prefill"][1]["ttft_s"].as<double>(), 0.1502);
  EXPECT_NEAR(c["prefill"][1]["predicted_s"].as<double>(), r.fit.prefill[1].predicted_s,
              r.fit.prefill[1].predicted_s * 1e-5);
  ASSERT_EQ(c["decode"].size(), 2u);
  EXPECT_EQ(c["decode"][1]["concurrency"].as<int>(), 64);
  EXPECT_NEAR(c["fit"]["max_abs_rel_error"].as<double>(), r.fit.max_abs_rel_error, 1e-5);
  EXPECT_EQ(c["largest_batch_within_tpot_slo"].as<int>(), 64);
  EXPECT_DOUBLE_EQ(c["capacity"]["mu_rps"].as<double>(), 7.25);
  EXPECT_EQ(c["capacity"]["live_check"]["evidence"].as<std::string>(),
            r.capacity->live_check_evidence);
}

}  // namespace
}  // namespace spillway::calibrate
