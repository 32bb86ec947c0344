// A class's (or a trace's) max_tokens cap: the client sends the cap, the class's output length
// is the hidden one the model stops at (issue 14, "Realistic traffic for the predictor").

#include <gtest/gtest.h>

#include "workload/arrivals.h"
#include "workload/workload_test_util.h"

namespace spillway {
namespace {

using workload_test::kAzureTrace;
using workload_test::LoadError;

const std::string kPoisson = "name: x\narrival: {process: poisson, rate: 50, duration_s: 10}\n";

TEST(MaxTokensCapTest, AClassWithoutACapSendsItsLengthWithIgnoreEos) {
  const Scenario s = LoadScenarioFromString(
      kPoisson + "classes: [{name: a, prompt_tokens: 8, output_tokens: 64}]\n", "t.yaml");
  EXPECT_EQ(s.classes[0].max_tokens, 0);
  for (const Arrival& a : GenerateArrivals(s, 1)) {
    EXPECT_TRUE(a.ignore_eos);
    EXPECT_EQ(a.max_tokens, 64);
    EXPECT_EQ(a.generated_tokens(), 64);
  }
}

TEST(MaxTokensCapTest, AClassWithACapSendsItAndHidesTheLengthTheModelStopsAt) {
  const Scenario s = LoadScenarioFromString(
      kPoisson +
          "classes: [{name: a, prompt_tokens: 8, max_tokens: 256,\n"
          "           output_tokens: {dist: uniform, min: 100, max: 400}}]\n",
      "t.yaml");
  EXPECT_EQ(s.classes[0].max_tokens, 256);
  const std::vector<Arrival> arrivals = GenerateArrivals(s, 1);
  ASSERT_GT(arrivals.size(), 100U);
  int stopped = 0;
  for (const Arrival& a : arrivals) {
    EXPECT_FALSE(a.ignore_eos);
    EXPECT_EQ(a.max_tokens, 256);
    EXPECT_EQ(a.generated_tokens(), std::min(a.output_tokens, 256));
    stopped += a.output_tokens < 256;
  }
  EXPECT_GT(stopped, 0);
  EXPECT_LT(stopped, static_cast<int>(arrivals.size()));
}

TEST(MaxTokensCapTest, TheCapDoesNotMoveArrivalTimesOrLengths) {
  const std::string classes =
      "classes: [{name: a, prompt_tokens: {dist: uniform, min: 8, max: "
      "64}, output_tokens: {dist: uniform, min: 1, max: 300}";
  const std::vector<Arrival> exact =
      GenerateArrivals(LoadScenarioFromString(kPoisson + classes + "}]\n", "t.yaml"), 3);
  const std::vector<Arrival> capped = GenerateArrivals(
      LoadScenarioFromString(kPoisson + classes + ", max_tokens: 128}]\n", "t.yaml"), 3);
  ASSERT_EQ(exact.size(), capped.size());
  for (std::size_t i = 0; i < exact.size(); ++i) {
    EXPECT_EQ(exact[i].time_s, capped[i].time_s);
    EXPECT_EQ(exact[i].prompt_tokens, capped[i].prompt_tokens);
    EXPECT_EQ(exact[i].output_tokens, capped[i].output_tokens);
  }
}

TEST(MaxTokensCapTest, ATraceTakesItsCapFromTheArrivalSection) {
  const Scenario s =
      LoadScenarioFromString("name: t\narrival: {process: trace, file: " + kAzureTrace +
                                 ", duration_s: 60, max_tokens: 512}\n",
                             "t.yaml");
  EXPECT_EQ(s.arrival.trace_max_tokens, 512);
  const std::vector<Arrival> arrivals = GenerateArrivals(s, 1);
  ASSERT_FALSE(arrivals.empty());
  for (const Arrival& a : arrivals) {
    EXPECT_FALSE(a.ignore_eos);
    EXPECT_EQ(a.max_tokens, 512);
  }
  const Scenario exact = LoadScenarioFromString(
      "name: t\narrival: {process: trace, file: " + kAzureTrace + ", duration_s: 60}\n", "t.yaml");
  for (const Arrival& a : GenerateArrivals(exact, 1)) {
    EXPECT_TRUE(a.ignore_eos);
    EXPECT_EQ(a.max_tokens, a.output_tokens);
  }
}

TEST(MaxTokensCapTest, BadCapsNameTheField) {
  EXPECT_NE(LoadError(kPoisson +
                      "classes: [{name: a, prompt_tokens: 8, output_tokens: 8, max_tokens: 0}]\n")
                .find("test.yaml:3: classes[0].max_tokens: must be >= 1, got '0'"),
            std::string::npos);
  EXPECT_NE(LoadError("name: t\narrival: {process: trace, file: " + kAzureTrace +
                      "}\nclasses: [{name: a, max_tokens: 64}]\n")
                .find("classes[0].max_tokens: a trace's requests take the cap from "
                      "arrival.max_tokens"),
            std::string::npos);
  EXPECT_NE(
      LoadError("name: t\narrival: {process: trace, file: " + kAzureTrace + ", max_tokens: -1}\n")
          .find("arrival.max_tokens: must be >= 1, got '-1'"),
      std::string::npos);
}

}  // namespace
}  // namespace spillway
