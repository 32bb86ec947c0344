// `spillway serve`: every key of every config section is also a flag (docs/serve.md), the
// keys with dashes; the switches that default to on are turned off with a --no-* flag.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/run_command.h"
#include "server/server_config.h"

namespace spillway {
namespace {

TEST(ServeFlagsTest, EveryConfigKeyIsAFlag) {
  const testing_util::CommandResult help =
      testing_util::RunCommand({SPILLWAY_BINARY, "serve", "--help"}, 30);
  ASSERT_TRUE(help.exited && help.exit_code == 0) << help.output;
  const std::map<std::string, std::string> switches = {
      {"slo_budgets", "--no-slo-budgets"},
      {"enable_chunked_prefill", "--no-chunked-prefill"},
      {"propagate_cancellation", "--no-cancel-propagation"}};
  for (const auto& [section, keys] : server::ConfigSectionKeys()) {
    for (const std::string& key : keys) {
      std::string flag = "--" + key;
      for (char& c : flag) {
        c = c == '_' ? '-' : c;
      }
      if (const auto it = switches.find(key); it != switches.end()) {
        flag = it->second;
      }
      EXPECT_NE(help.output.find(flag + " "), std::string::npos)
          << section << "." << key << ": no " << flag << " in\n"
          << help.output;
    }
  }
}

}  // namespace
}  // namespace spillway
