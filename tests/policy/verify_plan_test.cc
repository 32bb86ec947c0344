// The scenarios `spillway policy verify` runs (src/policy/verify_plan.h), and the retry storm's
// criterion on the simulator: the lesson's 100 clients retrying with jitter pass, the same
// clients without jitter re-form the spike, against the same engine and admission code.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "policy/policy_reader.h"
#include "policy/verify_plan.h"
#include "policy/verify_verdicts.h"
#include "sim/run_config.h"
#include "sim/simulator.h"

namespace spillway::policy {
namespace {

const std::string kPlanSource = SPILLWAY_SOURCE_DIR;

struct PlanInputs {
  Policy policy = ReadPolicyFile(kPlanSource + "/policies/reference.yaml");
  Scenario workload = LoadScenario(kPlanSource + "/scenarios/seed-burst.yaml");
};

TEST(VerifyPlanTest, TheBaselineAndBurstRunThePolicysRatesWithItsSlosAndNoRetries) {
  const PlanInputs in;
  const Scenario base = BaselineScenario(in.policy, in.workload, 20);
  EXPECT_EQ(base.arrival.kind, ArrivalProcess::Kind::kPoisson);
  EXPECT_DOUBLE_EQ(base.arrival.rate_rps, 8);
  EXPECT_DOUBLE_EQ(base.ArrivalSpan(), 20);
  EXPECT_EQ(base.classes.size(), 3U);
  EXPECT_DOUBLE_EQ(*base.slo.ttft_s, 1.0);
  EXPECT_DOUBLE_EQ(*base.slo.tpot_s, 0.035);
  EXPECT_EQ(base.client.retry, RetryPolicy::kNone);
  EXPECT_DOUBLE_EQ(base.client.total_timeout_s, 5.0);  // timeouts.client_s
  EXPECT_DOUBLE_EQ(base.client.ttft_timeout_s, 2.0);   // the workload's, shorter
  const Scenario burst = BurstScenario(in.policy, in.workload, 600);
  EXPECT_DOUBLE_EQ(burst.arrival.rate_rps, 30);
  EXPECT_DOUBLE_EQ(burst.ArrivalSpan(), 60);  // at most workload.burst_duration_s
}

TEST(VerifyPlanTest, TheStormTheDisconnectAndTheReplayAreShapedAsTheirItemsSay) {
  const PlanInputs in;
  const Scenario storm = RetryStormScenario(in.policy, in.workload);
  EXPECT_EQ(storm.arrival.kind, ArrivalProcess::Kind::kBurst);
  EXPECT_EQ(storm.arrival.burst_count, 100);
  EXPECT_EQ(storm.client.retry, RetryPolicy::kBackoffJitter);
  EXPECT_EQ(storm.client.max_attempts, 4);  // 3 retries
  EXPECT_DOUBLE_EQ(storm.client.jitter_s, 0.5);
  EXPECT_TRUE(storm.client.use_retry_after);

  const Scenario d = DisconnectScenario(in.policy, in.workload, 8, 100, 1.5);
  ASSERT_EQ(d.classes.size(), 1U);
  EXPECT_EQ(d.classes[0].prompt_tokens.value, 32);  // chat, the most common class
  EXPECT_EQ(d.classes[0].output_tokens.value, 100);
  EXPECT_EQ(d.classes[0].max_tokens, 0);  // exact, ignore_eos
  EXPECT_EQ(d.arrival.burst_count, 8);
  EXPECT_DOUBLE_EQ(d.client.total_timeout_s, 1.5);

  const Scenario cut = ReplayScenario(in.workload, 40);
  ASSERT_EQ(cut.arrival.steps.size(), 2U);  // 30 s of base load, 10 s of the burst
  EXPECT_DOUBLE_EQ(cut.arrival.steps[1].duration_s, 10);
  EXPECT_DOUBLE_EQ(cut.ArrivalSpan(), 40);
  EXPECT_DOUBLE_EQ(ReplayScenario(in.workload, 1000).ArrivalSpan(), 150);
}

// The storm in the simulator under the reference engine (forecast admission): its attempts'
// send times and what the criterion makes of them.
RetryStormFigures SimulatedStorm(const Scenario& storm) {
  const RunConfig rc =
      ResolveRunConfig(storm, AdmissionPolicy::kForecast, kPlanSource + "/profiles");
  std::vector<AttemptSend> sends;
  SimOptions options;
  options.on_record = [&](const AttemptRecord& r) { sends.push_back({r.attempt, r.sent_s}); };
  Simulate(storm, rc, options);
  return MeasureRetryStorm(sends);
}

TEST(VerifyPlanTest, InTheSimulatorJitteredRetriesPassAndRetriesWithoutJitterFail) {
  const PlanInputs in;
  Scenario storm = RetryStormScenario(in.policy, in.workload);
  const RetryStormFigures jittered = SimulatedStorm(storm);
  ASSERT_FALSE(jittered.rounds.empty());
  EXPECT_GE(jittered.rounds[0].retries, kRetryRoundMinRetries);
  EXPECT_EQ(JudgeRetryStorm(jittered, "sim").verdict, Verdict::kPass)
      << JudgeRetryStorm(jittered, "sim").evidence;
  storm.client.jitter_s = 0;
  const ChecklistItem synced = JudgeRetryStorm(SimulatedStorm(storm), "sim");
  EXPECT_EQ(synced.verdict, Verdict::kFail) << synced.evidence;
}

}  // namespace
}  // namespace spillway::policy
