// `spillway serve`: every key of every config section is also a flag (docs/serve.md), the
// keys with dashes; the switches that default to on are turned off with a --no-* flag.

#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "common/run_command.h"
#include "common/server_fixture.h"
#include "config/server_config.h"

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

TEST(ServeFlagsTest, FlagValuesAreValidatedLikeTheFileKeys) {
  for (const char* value : {"0", "99999999999"}) {
    const testing_util::CommandResult r = testing_util::RunCommand(
        {SPILLWAY_BINARY, "serve", "--port", "0", "--slo-budget-context-tokens", value}, 30);
    EXPECT_TRUE(r.exited && r.exit_code != 0) << value << ": " << r.output;
    EXPECT_NE(r.output.find("slo_budget_context_tokens"), std::string::npos)
        << value << ": " << r.output;
  }
}

class NoChunkedPrefillTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override { return {"--no-chunked-prefill"}; }
};

TEST_F(NoChunkedPrefillTest, ALongPromptIsServedInOneStep) {
  // Without chunking the step's token budget must hold a whole prompt (as vLLM and `spillway
  // sim` do): it is raised to max_model_len, so a 1,000-token prompt is served, not refused.
  std::string prompt = "[1";
  for (int i = 1; i < 1000; ++i) {
    prompt += ",1";
  }
  prompt += "]";
  const server_test::HttpResponse r =
      client().Post("/v1/completions", R"({"prompt":)" + prompt + R"(,"max_tokens":4})", {}, 30);
  EXPECT_EQ(r.status, 200) << r.error << r.body;
}

}  // namespace
}  // namespace spillway

namespace spillway {
namespace {

/// "max_num_seqs N, max_num_batched_tokens M" as a start-up line prints it.
std::string Budgets(const std::string& output) {
  const std::size_t at = output.find("max_num_seqs ");
  if (at == std::string::npos) {
    return "";
  }
  std::size_t end = output.find("max_num_batched_tokens ", at) + 23;
  while (end < output.size() && std::isdigit(static_cast<unsigned char>(output[end])) != 0) {
    ++end;
  }
  return output.substr(at, end - at);
}

// `spillway serve --scenario FILE` runs the engine `spillway sim --scenario FILE` simulates:
// one resolve (engine/resolve.h) from the scenario's engine, admission, timeouts and slo
// sections gives both the same batch budgets and KV pool.
class ServeScenarioTest : public server_test::ServerFixture {
 protected:
  static std::string Scenario() {
    return std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/failure/long-prompt-burst.yaml";
  }
  std::vector<std::string> ServerArgs() override {
    return {"--scenario", Scenario(), "--client-timeout-s", "25"};
  }
};

TEST_F(ServeScenarioTest, ServesTheEngineTheSimulatorRunsForTheSameFile) {
  const testing_util::CommandResult sim = testing_util::RunCommand(
      {SPILLWAY_BINARY, "sim", "--scenario", Scenario(), "--policy", "unbounded"}, 120);
  ASSERT_TRUE(sim.exited && sim.exit_code == 0) << sim.output;
  const std::string served = server().Output();
  ASSERT_FALSE(Budgets(sim.output).empty()) << sim.output;
  EXPECT_EQ(Budgets(served), Budgets(sim.output)) << served;
  // The scenario's tight KV pool (engine.num_gpu_blocks), not the profile's.
  const std::size_t blocks = sim.output.find(" KV blocks");
  ASSERT_NE(blocks, std::string::npos);
  const std::size_t start = sim.output.rfind(' ', blocks - 1) + 1;
  const std::string count = sim.output.substr(start, blocks - start);
  EXPECT_NE(served.find(count + " KV blocks"), std::string::npos) << count << "\n" << served;
}

}  // namespace
}  // namespace spillway
