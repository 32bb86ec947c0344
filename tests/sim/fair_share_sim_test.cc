// Fair shedding in the simulator (admission.fair_share_min_ratio, admission/fair_share.h), on
// the reference burst with varied lengths: by default admission by prediction serves documents
// at a third of their offered share (their prefill rarely fits); with the bound each class
// keeps at least half its offered share, at a goodput cost measured here against the default.

#include <gtest/gtest.h>

#include <string>

#include "common/sanitizer.h"
#include "sim_fixture.h"

namespace spillway {
namespace {

using simtest::RepoPath;
using simtest::RunSim;

// The lowest served share over offered share among the run's classes.
double LowestShareRatio(const RunSummary& s) {
  double lowest = 1e9;
  for (const auto& [name, c] : s.classes) {
    const ClassShares shares = SharesOf(s.classes, name);
    lowest = std::min(lowest, shares.served / shares.offered);
  }
  return lowest;
}

class FairShareSimTest : public testing::TestWithParam<AdmissionPolicy> {};

TEST_P(FairShareSimTest, EveryClassKeepsHalfItsOfferedShareAtAMeasuredCost) {
  if (GetParam() == AdmissionPolicy::kForecast && testing_util::kUnderAddressSanitizer) {
    GTEST_SKIP() << testing_util::kReleaseSuiteOnly;
  }
  const Scenario sc = LoadScenario(RepoPath("scenarios/seed-burst-eos-varied.yaml"));
  ASSERT_EQ(sc.classes.size(), 3U);
  RunOverrides fair;
  fair.fair_share_min_ratio = 0.5;
  const RunSummary by_default = RunSim(sc, GetParam());
  const RunSummary shared = RunSim(sc, GetParam(), fair);
  // Measured (served / offered share of documents): predictive 3.3% / 10.3% by default, 5.9%
  // with the bound; forecast 3.2% and 6.1%.
  EXPECT_LT(LowestShareRatio(by_default), 0.4);
  EXPECT_GE(LowestShareRatio(shared), 0.5);
  EXPECT_GT(shared.rejected_by_reason.at("fair_share"), 0);
  // The cost: a document costs the engine several chats. Measured goodput (req/s, whole run):
  // predictive 10.67 by default, 9.23 with the bound (87%); forecast 10.70 and 9.19 (86%).
  EXPECT_GE(shared.goodput_rps, 0.8 * by_default.goodput_rps);
  EXPECT_LT(shared.goodput_rps, by_default.goodput_rps);
  // The promise to what is admitted holds: at most 1% dropped at the queue head.
  EXPECT_LE(shared.dropped_at_queue_head, shared.admitted / 100);
}

// The bound holds however many flows share the rest of the load: chats split over 60
// fairness IDs (each noisy around its share) beside one flow of documents. Found by a new user:
// when only flows above their own offered share yielded, documents kept 0.25 to 0.30 of their
// offered share under a bound of 0.5.
TEST(FairShareManyFlowsSimTest, DocumentsKeepHalfTheirShareBesideSixtyChatFlows) {
  if (testing_util::kUnderAddressSanitizer) {
    GTEST_SKIP() << testing_util::kReleaseSuiteOnly;
  }
  std::string yaml = R"(name: many-flows
seed: 1
arrival:
  process: steps
  steps: [{rate: 8, duration_s: 20}, {rate: 30, duration_s: 60}]
client: {ttft_timeout_s: 2.0, total_timeout_s: 10.0}
slo: {ttft_s: 1.0, tpot_s: 0.035}
classes:
  - {name: document, share: 0.2, prompt_tokens: 512, output_tokens: 128}
)";
  for (int i = 0; i < 60; ++i) {
    yaml += "  - {name: chat" + std::to_string(i) + ", share: " + std::to_string(0.8 / 60) +
            ", prompt_tokens: 32, output_tokens: 64, fairness_id: f" + std::to_string(i) + "}\n";
  }
  const Scenario sc = LoadScenarioFromString(yaml, "many-flows.yaml");
  RunOverrides fair;
  fair.fair_share_min_ratio = 0.5;
  const RunSummary s = RunSim(sc, AdmissionPolicy::kForecast, fair);
  const ClassShares documents = SharesOf(s.classes, "document");
  // Measured: 11.2% served of 19.6% offered (0.57); 4.9% before the rule above.
  EXPECT_GE(documents.served / documents.offered, 0.5)
      << documents.served << " of " << documents.offered;
}

// A flow whose prompts are too long to finish before the server's deadline (3,900 tokens: the
// cost model under-estimates their decode, so admission lets some in and they fail with 504)
// is not starved for queue room: the bound costs the others little. Before failures counted,
// a new user's trial measured 28% of the goodput lost for 12 more good requests of it.
TEST_P(FairShareSimTest, AFlowThatFailsAtTheDeadlineTakesLittleFromTheOthers) {
  const Scenario sc = LoadScenarioFromString(R"(name: too-long
seed: 1
arrival:
  process: steps
  steps: [{rate: 8, duration_s: 10}, {rate: 30, duration_s: 40}, {rate: 8, duration_s: 10}]
classes:
  - {name: chat, share: 0.9, prompt_tokens: 32, output_tokens: 64}
  - {name: huge, share: 0.1, prompt_tokens: 3900, output_tokens: 128}
client: {ttft_timeout_s: 2.0, total_timeout_s: 10.0}
slo: {ttft_s: 1.0, tpot_s: 0.035}
)",
                                             "too-long.yaml");
  RunOverrides fair;
  fair.fair_share_min_ratio = 0.5;
  const RunSummary by_default = RunSim(sc, GetParam());
  const RunSummary shared = RunSim(sc, GetParam(), fair);
  // Measured: predictive 12.95 and 12.65 req/s (98%), forecast 12.97 and 12.67 (98%).
  EXPECT_GE(shared.goodput_rps, 0.95 * by_default.goodput_rps);
}

// The gateway's own bound (routing::PoolConfig::fair_share, as `spillway gateway
// --fair-share-min-ratio` live), with the engines' off: one engine behind the gateway at three
// times its capacity (the fleet burst on one replica), where documents are all but shut out.
TEST_P(FairShareSimTest, TheGatewaysBoundHoldsForItsPool) {
  if (GetParam() == AdmissionPolicy::kForecast && testing_util::kUnderAddressSanitizer) {
    GTEST_SKIP() << testing_util::kReleaseSuiteOnly;
  }
  const Scenario sc = LoadScenario(RepoPath("scenarios/fleet/seed-burst-x3.yaml"));
  SimOptions opt;
  opt.replicas = 1;
  opt.gateway = SimGateway{};
  opt.gateway->router.ttft_slo_s = sc.slo.ttft_s.value_or(1.0);
  const RunSummary by_default = Simulate(sc, simtest::Resolve(sc, GetParam()), opt);
  opt.gateway->fair_share.min_share_ratio = 0.5;
  const RunSummary fair = Simulate(sc, simtest::Resolve(sc, GetParam()), opt);
  // Measured (served / offered share of documents): forecast 0.1% / 10.2% by default, 5.6%
  // with the gateway's bound; predictive 0.3% and 5.4%.
  EXPECT_LT(LowestShareRatio(by_default), 0.1);
  EXPECT_GE(LowestShareRatio(fair), 0.5);
  EXPECT_GT(fair.rejected_by_reason.at("fair_share"), 0);
  // Measured goodput (req/s, whole run): forecast 15.11 and 12.35 (82%), predictive 15.09
  // and 12.36 (82%).
  EXPECT_GE(fair.goodput_rps, 0.75 * by_default.goodput_rps);
}

INSTANTIATE_TEST_SUITE_P(Policies, FairShareSimTest,
                         testing::Values(AdmissionPolicy::kPredictive, AdmissionPolicy::kForecast),
                         [](const testing::TestParamInfo<AdmissionPolicy>& p) {
                           return std::string(ToString(p.param));
                         });

}  // namespace
}  // namespace spillway
