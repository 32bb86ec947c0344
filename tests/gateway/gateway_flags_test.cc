// The gateway router's flags on the command line, `spillway gateway` and `spillway sim` alike:
// the wait queue (--queue-max-wait-s) and the learned margin (--prediction-quantile) take a
// finite number in their range, 0 meaning off; anything else is a usage error (exit 2) naming
// the flag, before any socket is opened.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/run_command.h"

namespace spillway {
namespace {

testing_util::CommandResult RunSpillway(std::vector<std::string> args) {
  args.insert(args.begin(), SPILLWAY_BINARY);
  return testing_util::RunCommand(args, 30);
}

TEST(GatewayFlagsTest, BadValuesAreUsageErrorsInGatewayAndSim) {
  const std::string scenario =
      std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/fleet/seed-burst-x3.yaml";
  for (const auto& [flag, value] :
       std::vector<std::pair<std::string, std::string>>{{"--queue-max-wait-s", "nan"},
                                                        {"--queue-max-wait-s", "-1"},
                                                        {"--queue-max-wait-s", "1e9"},
                                                        {"--prediction-quantile", "nan"},
                                                        {"--prediction-quantile", "1.5"},
                                                        {"--prediction-quantile", "abc"}}) {
    SCOPED_TRACE(flag + " " + value);
    const testing_util::CommandResult gw =
        RunSpillway({"gateway", "--port", "0", "--endpoint", "http://127.0.0.1:1", flag, value});
    EXPECT_TRUE(gw.exited && gw.exit_code == 2) << gw.output;
    const testing_util::CommandResult sim =
        RunSpillway({"sim", "--scenario", scenario, "--router", "gateway", flag, value});
    EXPECT_TRUE(sim.exited && sim.exit_code == 2) << sim.output;
    EXPECT_NE(sim.output.find(flag), std::string::npos) << sim.output;
  }
}

TEST(GatewayFlagsTest, AWaitAsLongAsTheDeadlineIsRefused) {
  const testing_util::CommandResult r =
      RunSpillway({"gateway", "--port", "0", "--endpoint", "http://127.0.0.1:1",
                   "--queue-max-wait-s", "5", "--request-timeout-s", "4.5"});
  EXPECT_TRUE(r.exited && r.exit_code == 2) << r.output;
  EXPECT_NE(r.output.find("queue.max_wait_s"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace spillway
