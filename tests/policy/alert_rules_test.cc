// `spillway policy alerts`: the rules it writes from the reference policy pass `promtool check
// rules`, and `promtool test rules` (alert_rules_promtool_test.yaml) shows each alert firing on
// the series that should fire it and silent on the one just beside it. promtool is Debian's
// `prometheus` package (scripts/deps.sh test installs it); without it the promtool tests skip.

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "common/run_command.h"
#include "common/text_file.h"
#include "policy/alert_rules.h"
#include "policy/policy_reader.h"

namespace spillway {
namespace {

using testing_util::CommandResult;
using testing_util::FindOnPath;
using testing_util::RunCommand;

const std::string kAlertsPolicy = std::string(SPILLWAY_SOURCE_DIR) + "/policies/reference.yaml";

TEST(AlertRulesTest,
     EveryThresholdOfThePolicyBecomesAnAlertAndTheGoodputFloorIsShareTimesCapacity) {
  const policy::Policy p = policy::ReadPolicyFile(kAlertsPolicy);
  EXPECT_DOUBLE_EQ(policy::GoodputAlertThresholdRps(p), 0.9 * 1 * 10.34);
  const std::string rules = policy::AlertRulesYaml(p);
  for (const char* expected :
       {"expr: vllm:num_requests_waiting > 10\n        for: 30s",
        "expr: vllm:kv_cache_usage_perc > 0.9\n        for: 60s",
        "expr: rate(vllm:num_preemptions_total[5m]) * 60 > 1\n",
        "expr: spillway:http_429:rate1m > 5\n",
        "expr: spillway:goodput_requests:rate1m < 9.306 and spillway:http_requests:rate1m >= "
        "9.306\n        for: 60s",
        "record: spillway:goodput_requests:rate1m\n        expr: "
        "sum(rate(spillway_goodput_requests_total[1m]))"}) {
    EXPECT_NE(rules.find(expected), std::string::npos) << expected << "\n" << rules;
  }
}

class AlertRulesPromtoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!FindOnPath("promtool")) {
      GTEST_SKIP() << "promtool not installed (Debian package `prometheus`)";
    }
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("spillway_alert_rules_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    const CommandResult r = RunCommand({SPILLWAY_BINARY, "policy", "alerts", kAlertsPolicy, "--out",
                                        (dir_ / "rules.yaml").string()},
                                       60);
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
};

TEST_F(AlertRulesPromtoolTest, TheRulesPassPromtoolCheckRules) {
  const CommandResult r =
      RunCommand({"promtool", "check", "rules", (dir_ / "rules.yaml").string()}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("SUCCESS: 8 rules found"), std::string::npos) << r.output;
}

TEST_F(AlertRulesPromtoolTest, EachAlertFiresOnItsSeriesAndStaysSilentOnTheOneBeside) {
  std::filesystem::copy_file(
      std::string(SPILLWAY_SOURCE_DIR) + "/tests/policy/alert_rules_promtool_test.yaml",
      dir_ / "alert_rules_promtool_test.yaml");
  const CommandResult r = RunCommand(
      {"promtool", "test", "rules", (dir_ / "alert_rules_promtool_test.yaml").string()}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("SUCCESS"), std::string::npos) << r.output;
}

TEST_F(AlertRulesPromtoolTest, ANameWithTemplateBracesStaysLiteral) {
  // Annotations are Go templates: a policy named "team {{ x" made rules promtool rejects.
  std::string yaml = testing_util::ReadTextFile(kAlertsPolicy);
  const std::string name = "  name: reference";
  yaml.replace(yaml.find(name), name.size(), "  name: team {{ oops }} reference");
  const std::filesystem::path rules = dir_ / "braces.yaml";
  std::ofstream(rules) << policy::AlertRulesYaml(policy::ReadPolicyString(yaml, "p.yaml"));
  const CommandResult r = RunCommand({"promtool", "check", "rules", rules.string()}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(AlertRulesCommandTest, AnUnwritableOutIsAUsageErrorAndABadPolicyWritesNothing) {
  const CommandResult unwritable = RunCommand(
      {SPILLWAY_BINARY, "policy", "alerts", kAlertsPolicy, "--out", "/nonexistent/dir/r.yaml"}, 60);
  EXPECT_EQ(unwritable.exit_code, 2) << unwritable.output;
  const std::string bad = ::testing::TempDir() + "alert_rules_bad_policy.yaml";
  const std::string out = ::testing::TempDir() + "alert_rules_bad_out.yaml";
  std::ofstream(bad) << "policy: {name: x}\n";
  std::filesystem::remove(out);
  const CommandResult r = RunCommand({SPILLWAY_BINARY, "policy", "alerts", bad, "--out", out}, 60);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("policy.max_age_days: is required"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace spillway
