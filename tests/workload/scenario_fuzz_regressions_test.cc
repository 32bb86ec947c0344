// Inputs the scenario fuzzer found (fuzz/scenario_loader_fuzz.cc, docs/fuzzing.md), minimised:
// each broke the loader's contract (a Scenario or a ConfigError, nothing undefined on the way).

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/config_error.h"
#include "workload/arrivals.h"
#include "workload/scenario.h"
#include "workload/workload_test_util.h"

namespace spillway {
namespace {

using workload_test::LoadError;

// The "too many arrivals" message converted rate x duration (4.4e19) to int64: undefined
// behaviour (UBSan: "outside the range of representable values of type 'long'").
TEST(ScenarioFuzzRegressionsTest, HugeArrivalCountIsReportedWithoutOverflow) {
  EXPECT_EQ(
      LoadError("name: d\narrival: {process: poisson, rate: 22222222222222222221, duration_s: 2}\n"
                "classes"),
      "test.yaml:2: arrival.rate: asks for about 4.44e+19 arrivals (rate x duration), more than "
      "the limit of 10000000, got '22222222222222222221'");
  EXPECT_EQ(LoadError("name: d\narrival: {process: poisson, rate: 6000, duration_s: 2000}\n"),
            "test.yaml:2: arrival.rate: asks for about 12000000 arrivals (rate x duration), more "
            "than the limit of 10000000, got '6000'");
}

// Found with the fuzz harness (GenerateArrivals timed out at 5 s, memory growing) from a seed
// written while reading PoissonTimes: a dense step late in the schedule has gaps (1e-13 s)
// below the spacing of doubles at t = 1e6 s (1.2e-10 s), so t + gap == t and the step
// produced the same arrival time forever.
TEST(ScenarioFuzzRegressionsTest, StepTooFastForItsClockIsRefusedNotEndless) {
  EXPECT_EQ(LoadError("name: stall\narrival:\n  process: steps\n  steps:\n"
                      "    - {rate: 0.000001, duration_s: 1000000}\n"
                      "    - {rate: 10000000000000, duration_s: 0.0000000005}\n"
                      "classes:\n  - {name: a, prompt_tokens: 1, output_tokens: 1}\n"),
            "test.yaml:6: arrival.steps[1].rate: is too fast to time 1000000 s into the schedule: "
            "at most 1e+06 req/s there, got '10000000000000'");
}

TEST(ScenarioFuzzRegressionsTest, FastStepLateInTheScheduleStillLoads) {
  const Scenario s = LoadScenarioFromString(
      "name: late\narrival:\n  process: steps\n  steps:\n"
      "    - {rate: 0.000001, duration_s: 1000000}\n"
      "    - {rate: 1000, duration_s: 1}\n"
      "classes:\n  - {name: a, prompt_tokens: 1, output_tokens: 1}\n",
      "test.yaml");
  const std::vector<Arrival> arrivals = GenerateArrivals(s, 1);
  std::size_t in_burst = 0;
  for (const Arrival& a : arrivals) {
    ASSERT_LT(a.time_s, 1000001.0);
    in_burst += a.time_s >= 1e6 ? 1 : 0;
  }
  EXPECT_NEAR(static_cast<double>(in_burst), 1000.0, 150.0);
}

// A lognormal with cv 1.51e308 has sigma^2 = inf; its draws were exp(-inf + inf) = NaN, which
// the clamp let through and Draw turned into 1, below the distribution's min of 2 (the
// scenario fuzzer's arrival check).
TEST(ScenarioFuzzRegressionsTest, HugeCvStillDrawsWithinMinAndMax) {
  const Scenario s = LoadScenarioFromString(
      "name: s\narrival:\n  process: steps\n  steps:\n"
      "  - {rate: 4, duration_s: 1, mix: {a: 0, b: 2}}\n"
      "classes:\n"
      "  - {name: a,prompt_tokens: {dist: uniform,min: 1, max: 9}, output_tokens: 1,}\n"
      "  - {name: b, prompt_tokens: {dist: lognormal, mean: 50, cv: 1.51e308, min: 2, max: "
      "400}, output_tokens: 7}\n"
      "client:\n",
      "test.yaml");
  for (const Arrival& a : GenerateArrivals(s, 1)) {
    EXPECT_EQ(a.class_index, 1);
    EXPECT_GE(a.prompt_tokens, 2);
    EXPECT_LE(a.prompt_tokens, 400);
  }
  Rng rng(7);
  const TokenDist& dist = s.classes[1].prompt_tokens;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(Draw(dist, rng), 2);  // the limit: all mass at the bottom, clamped to min
  }
}

}  // namespace
}  // namespace spillway
