// `spillway policy check` as a user runs it: exit codes, the findings on stdout, and a file
// that does not read named with its line.

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/run_command.h"
#include "common/temp_dir.h"
#include "common/text_file.h"

namespace spillway {
namespace {

using testing_util::CommandResult;
using testing_util::RunCommand;

const std::string kPolicyReference = std::string(SPILLWAY_SOURCE_DIR) + "/policies/reference.yaml";

CommandResult Spillway(std::vector<std::string> args) {
  args.insert(args.begin(), SPILLWAY_BINARY);
  return RunCommand(args, 60);
}

TEST(PolicyCommandTest, TheReferencePolicyChecksOkOnItsMeasurementDay) {
  const CommandResult r = Spillway({"policy", "check", kPolicyReference, "--today", "2026-12-05"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("reference.yaml: ok ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("0 errors, 4 warnings"), std::string::npos) << r.output;
}

TEST(PolicyCommandTest, AStalePolicyFailsNamingTheFieldToReMeasure) {
  const CommandResult r = Spillway({"policy", "check", kPolicyReference, "--today", "2027-06-01"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("capacity.single_replica_mu_rps: error: measured.at"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("FAILED"), std::string::npos) << r.output;
}

TEST(PolicyCommandTest, AFileThatDoesNotReadFailsWithFileAndLineAndABadFlagIsAUsageError) {
  const std::string path = ::testing::TempDir() + "policy_command_test.yaml";
  std::ofstream(path) << "policy:\n  name: x\n  max_age: 3\n";
  const CommandResult bad = Spillway({"policy", "check", path});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("policy_command_test.yaml:3: policy.max_age: unknown field"),
            std::string::npos)
      << bad.output;
  EXPECT_EQ(Spillway({"policy", "check", kPolicyReference, "--today", "tomorrow"}).exit_code, 2);
  EXPECT_EQ(Spillway({"policy", "check", kPolicyReference, "--today", ""}).exit_code, 2)
      << "an empty date is not the clock's";
  EXPECT_EQ(Spillway({"policy", "check", "/nonexistent/policy.yaml"}).exit_code, 2);
  EXPECT_EQ(Spillway({"policy"}).exit_code, 2);
}

TEST(PolicyCommandTest, NoCommandWritesOntoThePolicyItReadsOrIntoAnEmptyPath) {
  const testing_util::TempDir tmp;
  const std::string copy = (tmp.path() / "serve.yaml").string();
  std::filesystem::copy_file(kPolicyReference, copy);
  const std::string before = testing_util::ReadTextFile(copy);
  // The rules, or a rendering whose serve.yaml is the policy itself: refused, nothing written.
  CommandResult r = Spillway({"policy", "alerts", copy, "--out", copy});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("is the policy it reads"), std::string::npos) << r.output;
  r = Spillway({"policy", "render", copy, "--out", tmp.path().string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("would replace the policy it reads (serve.yaml)"), std::string::npos)
      << r.output;
  EXPECT_EQ(testing_util::ReadTextFile(copy), before);
  // An empty --out is a usage error, not a crash nor the working directory.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"policy", "alerts", copy, "--out", ""},
        {"policy", "render", copy, "--out", ""},
        {"policy", "verify", copy, "--target", "http://127.0.0.1:1", "--out", ""},
        {"policy", "init", "--calibration", copy, "--scenario", copy, "--out", ""}}) {
    r = Spillway(args);
    EXPECT_EQ(r.exit_code, 2) << args[1] << ": " << r.output;
    EXPECT_NE(r.output.find("--out: needs a file name"), std::string::npos) << r.output;
  }
  // verify's lengths are finite numbers: nan is refused before anything runs.
  r = Spillway({"policy", "verify", copy, "--target", "http://127.0.0.1:1", "--baseline-s", "nan"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--baseline-s: must be a finite number"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace spillway
