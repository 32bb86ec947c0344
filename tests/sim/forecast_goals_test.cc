// The goal rows of issue 14 in the simulator: admission by the engine's own forecast of each
// request's TTFT (policy forecast) keeps its promise on the reference burst and its
// realistic-length variants, the ramp, the 10x soak load, cold simultaneous bursts of 100 and
// 1,000 requests and the Azure trace at 1x and 3x: at most 1% of the admitted requests are
// dropped at the queue head, abandoned or late for their TTFT SLO, and the goodput is the
// predictive policy's (W_est = Q / mu-hat), measured in the same test.

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "common/sanitizer.h"
#include "report/soak_check.h"
#include "sim_fixture.h"

namespace spillway {
namespace {

using simtest::RepoPath;
using simtest::RunSim;

struct GoalRow {
  const char* scenario;
  double time_scale = 0;  // > 0: the trace replayed this much faster (1/3: three times)
  /// The forecast's goodput against predictive's: 1 = at least as high. The measured ratio is
  /// in the comment of each row.
  double goodput_ratio = 1.0;
  /// Invariants checked at an amortized rate (a full check is O(KV blocks), and with prefix
  /// caching it also walks the hash index): for long runs on large pools.
  bool amortized_checks = false;
  /// Skipped under ASan (common/sanitizer.h): the rows of 15 to 35 s there.
  bool release_only = false;
};

// The row's scenario in ctest's output (not its bytes).
void PrintTo(const GoalRow& row, std::ostream* os) {
  *os << row.scenario << (row.time_scale > 0 ? " at 1/time_scale" : "");
}

class ForecastGoalsTest : public testing::TestWithParam<GoalRow> {};

TEST_P(ForecastGoalsTest, AtMostOnePercentOfAdmittedRequestsMissAndGoodputHolds) {
  const GoalRow row = GetParam();
  if (row.release_only && testing_util::kUnderAddressSanitizer) {
    GTEST_SKIP() << testing_util::kReleaseSuiteOnly;
  }
  Scenario sc = LoadScenario(RepoPath(row.scenario));
  if (row.time_scale > 0) {
    sc.arrival.time_scale = row.time_scale;
  }
  const InvariantChecks checks =
      row.amortized_checks ? InvariantChecks::kAmortized : InvariantChecks::kEveryStep;
  const RunSummary predictive = RunSim(sc, AdmissionPolicy::kPredictive, {}, 1, checks);
  const RunSummary forecast = RunSim(sc, AdmissionPolicy::kForecast, {}, 1, checks);
  ASSERT_GT(forecast.admitted, 0);
  // Dropped at the queue head, abandoned or completed outside an SLO, as `spillway soak-check`
  // counts them; failures at the request deadline are counted apart, below.
  EXPECT_LE(PromisesOf(forecast, std::nullopt).broken(), forecast.admitted / 100) << row.scenario;
  EXPECT_GE(forecast.goodput_rps, row.goodput_ratio * predictive.goodput_rps) << row.scenario;
  // What fails after admission fails at the server's request deadline for its length (the
  // hidden lengths of seed-burst-eos-varied), never for the wait: no more than predictive's.
  EXPECT_LE(forecast.failed, predictive.failed) << row.scenario;
}

// Measured (forecast vs predictive goodput, whole run, req/s; dropped at the head of the
// forecast's admitted):
INSTANTIATE_TEST_SUITE_P(
    IssueFourteen, ForecastGoalsTest,
    testing::Values(GoalRow{"scenarios/seed-burst.yaml"},  // 11.02 vs 11.01; 0 of 1,653
                    GoalRow{"scenarios/seed-burst-eos.yaml", 0, 1.0, false,
                            true},  // 11.02 vs 11.01; 0 of 1,653
                    // 10.70 vs 10.67; 11 of 1,728 (predictive: 40 of 1,764). The lengths
                    // are drawn (8 futures): with mean lengths it was 10.55 and 7 of 1,694.
                    GoalRow{"scenarios/seed-burst-eos-varied.yaml", 0, 1.0, false, true},
                    GoalRow{"scenarios/failure/ramp.yaml"},  // 12.30 vs 12.26; 0 of 1,476
                    // 15.250 vs 15.255; 0 of 9,153 (predictive: 5,180 of 14,333 dropped)
                    GoalRow{"scenarios/soak.yaml", 0, 0.995, false, true},
                    GoalRow{"scenarios/cold-burst-100.yaml"},   // 1.80 vs 1.80; 0 of 27
                    GoalRow{"scenarios/cold-burst-1000.yaml"},  // 1.80 vs 1.80; 0 of 27
                    GoalRow{"scenarios/azure-conv.yaml", 0, 1.0, false,
                            true},  // 5.03 vs 5.03; 0 of 603
                    // 21.00 vs 20.45; 0 of 2,520
                    GoalRow{"scenarios/azure-conv.yaml", 1.0 / 3, 1.0, false, true},
                    // Prefix caching on: 12.20 vs 11.94; 4 dropped and 6 late of 1,840 (with
                    // one margin for short and long prompts: 6 and 28 of 1,841).
                    // The Mooncake trace's row is in prefix_cache_sim_test.cc.
                    GoalRow{"scenarios/shared-system-prompt.yaml", 0, 1.0, true}),
    [](const testing::TestParamInfo<GoalRow>& info) {
      std::string name = info.param.scenario;
      name = name.substr(name.rfind('/') + 1);
      name = name.substr(0, name.find('.'));
      for (char& c : name) {
        c = c == '-' ? '_' : c;
      }
      return info.param.time_scale > 0 ? name + "_x3" : name;
    });

TEST(ForecastGoalsTest, TheColdBurstIsRefusedAtTheDoorNotAtTheQueueHead) {
  // Issue 14: 100 requests at once to an idle engine got 27 answers and 73 refusals, the
  // slowest of them after 1 s (admitted, then dropped at the queue head). The forecast admits
  // the batch it can start within the SLO and refuses the rest at once.
  const Scenario sc = LoadScenario(RepoPath("scenarios/cold-burst-100.yaml"));
  const RunSummary predictive = RunSim(sc, AdmissionPolicy::kPredictive);
  const RunSummary forecast = RunSim(sc, AdmissionPolicy::kForecast);
  EXPECT_GT(predictive.dropped_at_queue_head, 0);  // measured 11
  EXPECT_EQ(forecast.dropped_at_queue_head, 0);
  EXPECT_EQ(forecast.good, predictive.good);  // 27 both
  EXPECT_EQ(forecast.rejected_by_status.at("429"), 100 - forecast.admitted);
}

}  // namespace
}  // namespace spillway
