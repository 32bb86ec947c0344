// A `steps` arrival whose steps carry their own class mix (`mix: {class: share}`): arrivals of
// a step follow its mix, other steps keep the classes' shares, and bad mixes are load errors
// naming the file, line and field.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/config_error.h"
#include "workload/arrivals.h"
#include "workload/scenario.h"
#include "workload/workload_test_util.h"

namespace spillway {
namespace {

constexpr char kMixed[] = R"(name: mixed
arrival:
  process: steps
  steps:
    - {rate: 100, duration_s: 10}
    - {rate: 100, duration_s: 10, mix: {long: 1}}
    - {rate: 100, duration_s: 10, mix: {short: 9, long: 1}}
classes:
  - {name: short, share: 1, prompt_tokens: 10, output_tokens: 10}
  - {name: long, share: 1, prompt_tokens: 1000, output_tokens: 10}
)";

using workload_test::LoadError;

TEST(StepMixTest, EachStepDrawsClassesFromItsOwnMix) {
  const Scenario s = LoadScenarioFromString(kMixed, "test.yaml", ".");
  ASSERT_EQ(s.arrival.steps.size(), 3u);
  EXPECT_TRUE(s.arrival.steps[0].mix.empty());
  EXPECT_EQ(s.arrival.steps[1].mix, (std::vector<double>{0, 1}));
  const std::vector<Arrival> arrivals = GenerateArrivals(s, 3);
  int counts[3][2] = {};
  for (const Arrival& a : arrivals) {
    const int step = a.time_s < 10 ? 0 : a.time_s < 20 ? 1 : 2;
    ++counts[step][a.class_index];
  }
  // Step 0: the classes' equal shares; step 1: only `long`; step 2: 90% `short`.
  const double step0 = counts[0][0] + counts[0][1];
  EXPECT_NEAR(counts[0][0] / step0, 0.5, 0.06);
  EXPECT_EQ(counts[1][0], 0);
  EXPECT_GT(counts[1][1], 800);
  const double step2 = counts[2][0] + counts[2][1];
  EXPECT_NEAR(counts[2][0] / step2, 0.9, 0.04);
}

TEST(StepMixTest, UnknownClassesNegativeSharesAndAllZeroAreErrors) {
  const std::string base = R"(name: bad
arrival:
  process: steps
  steps:
    - {rate: 1, duration_s: 1, mix: MIX}
classes:
  - {name: short, prompt_tokens: 10, output_tokens: 10}
)";
  auto with = [&](const std::string& mix) {
    std::string yaml = base;
    yaml.replace(yaml.find("MIX"), 3, mix);
    return LoadError(yaml);
  };
  EXPECT_NE(with("{shrot: 1}").find("test.yaml:5: arrival.steps[0].mix.shrot: unknown field"),
            std::string::npos)
      << with("{shrot: 1}");
  EXPECT_NE(with("{short: -1}").find("mix.short"), std::string::npos) << with("{short: -1}");
  EXPECT_NE(with("{short: 0}").find("at least one class"), std::string::npos) << with("{short: 0}");
  EXPECT_NE(with("3").find("must be a map"), std::string::npos) << with("3");
}

}  // namespace
}  // namespace spillway
