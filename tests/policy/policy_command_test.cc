// `spillway policy check` as a user runs it: exit codes, the findings on stdout, and a file
// that does not read named with its line.

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "common/run_command.h"

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
  EXPECT_EQ(Spillway({"policy", "check", "/nonexistent/policy.yaml"}).exit_code, 2);
  EXPECT_EQ(Spillway({"policy"}).exit_code, 2);
}

}  // namespace
}  // namespace spillway
