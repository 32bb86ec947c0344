// Issue 14's goal rows live: `spillway serve --scenario FILE --policy forecast` (the default
// policy) with the load generator (live_failure_fixture.h). At most 1% of the admitted requests
// dropped at the queue head, abandoned or outside their SLOs; every refusal answered at the door
// (p99 under 50 ms at the client); at full length, goodput at least 95% of what was measured
// (tests/sim/forecast_goals_test.cc checks the same rows in virtual time against the
// predictive policy's goodput in the same run).
//
// In CI the reference burst runs short (each rate step a quarter as long); the Azure trace's
// rows only at full length, in `make bench-failure` (SPILLWAY_FAILURE_SCALE), as CI's 30
// minutes have no room for them (the first 30 s at 3x took 40 s of a ctest slot). The ramp's
// row is LiveRampTest, which checks the same.

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "failure/live_failure_fixture.h"

namespace spillway::failure_test {
namespace {

struct LiveGoalRow {
  const char* name;       ///< the test's
  const char* label;      ///< the run's (its summary's policy; SCENARIO-LABEL.json when saved)
  const char* scenario;   ///< under the source directory
  double time_scale = 0;  ///< > 0: the trace replayed this much faster (1/3: three times)
  /// The short version CI runs: each rate step this much as long; 0: full length only
  /// (skipped in CI).
  double short_scale = 0;
  /// Goodput over the full-length run, req/s, at least this (a short run's goodput depends on
  /// where it is cut): 95% of what was measured, stated beside each row.
  double min_goodput_rps = 0;
};

// The test's name in ctest's output (not the row's bytes).
void PrintTo(const LiveGoalRow& row, std::ostream* os) { *os << row.name; }

class LiveForecastGoalsTest : public LiveFailureTest,
                              public testing::WithParamInterface<LiveGoalRow> {
 protected:
  std::vector<std::string> ServerArgs() override {
    return {"--scenario", std::string(SPILLWAY_SOURCE_DIR) + "/" + GetParam().scenario, "--policy",
            "forecast"};
  }
};

TEST_P(LiveForecastGoalsTest, AtMostOnePercentOfTheAdmittedMissAndRefusalsAreAtTheDoor) {
  const LiveGoalRow row = GetParam();
  Scenario sc = LoadScenario(std::string(SPILLWAY_SOURCE_DIR) + "/" + row.scenario);
  if (row.time_scale > 0) {
    sc.arrival.time_scale = row.time_scale;
  }
  const bool full_length = LongVersion();
  if (!full_length && row.short_scale <= 0) {
    GTEST_SKIP() << "full length only: make bench-failure (SPILLWAY_FAILURE_SCALE)";
  }
  if (!full_length) {
    for (RateStep& step : sc.arrival.steps) {
      step.duration_s *= row.short_scale;
    }
  }
  const LiveRun run = Bench(sc, kNever, row.label);
  const RunSummary& s = run.result.summary;
  EXPECT_EQ(run.result.transport_errors, 0);
  ASSERT_GT(s.admitted, 0);
  ExpectPromisesKept(s);
  // Failures at the request deadline are the hidden lengths' (a 256-token cap lets a request
  // run past 4.5 s), counted apart as in the simulator's test: 0 in every full-length run.
  RecordProperty("failed", std::to_string(s.failed));
  EXPECT_LT(RefusalP99(run), 0.050);
  if (full_length) {
    EXPECT_GE(s.goodput_rps, row.min_goodput_rps);
  }
}

// Measured at full length on the 2-core development machine, idle, one run each (admitted,
// broken promises, refusals' p99 at the client, goodput req/s; the predictive policy's in the
// same session; docs/failure.md): min_goodput_rps is 95% of the forecast's goodput.
// The prefix starts with "Live": ctest labels the rows `live` (tests/CMakeLists.txt).
INSTANTIATE_TEST_SUITE_P(
    LiveIssueFourteen, LiveForecastGoalsTest,
    testing::Values(
        // 1,635, 5 (0.31%), 4.5 ms, 10.87 (predictive: 1,680, 57 (3.4%), 10.82)
        LiveGoalRow{"seed_burst_eos", "forecast", "scenarios/seed-burst-eos.yaml", 0, 0.25, 10.3},
        // 603, 0, none refused, 5.03
        LiveGoalRow{"azure_conv", "forecast", "scenarios/azure-conv.yaml", 0, 0, 4.78},
        // 2,513, 2 (0.08%), 7.7 ms, 20.93 (predictive: 2,459, 19 (0.8%), 20.33)
        LiveGoalRow{"azure_conv_x3", "forecast-x3", "scenarios/azure-conv.yaml", 1.0 / 3, 0, 19.9}),
    [](const testing::TestParamInfo<LiveGoalRow>& info) { return info.param.name; });

}  // namespace
}  // namespace spillway::failure_test
