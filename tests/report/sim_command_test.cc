// `spillway sim` end to end: --records writes one JSON line per attempt of every run of a
// --compare, labelled by run and counted as the summary counts; bad flags (an empty or
// unknown policy, a policy twice, an empty number, --records with --measure-capacity) exit 2
// and write nothing; an out-of-range number or a word that is not a bool gets one message
// saying what is wanted; an unknown profile in a scenario names its line; outputs follow
// symlinks, refuse directories and each other.

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "common/run_command.h"
#include "common/temp_dir.h"

namespace spillway {
namespace {

namespace fs = std::filesystem;
using testing_util::CommandResult;
using testing_util::RunCommand;

CommandResult SimCommand(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {SPILLWAY_BINARY, "sim", "--scenario",
                                   std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/seed-burst.yaml"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, /*timeout_s=*/120);
}

TEST(SimCommandTest, RecordsHoldEveryAttemptOfEveryComparedRun) {
  testing_util::TempDir dir;
  const std::string records = (dir.path() / "records.jsonl").string();
  const std::string json = (dir.path() / "runs.json").string();
  const CommandResult r =
      SimCommand({"--compare", "predictive,forecast", "--records", records, "--json", json});
  ASSERT_EQ(r.exit_code, 0) << r.description << "\n" << r.output;
  EXPECT_NE(r.output.find("records written to " + records), std::string::npos) << r.output;
  // Attempts per run, and those with a forecast, from the records.
  std::map<std::string, std::int64_t> attempts;
  std::map<std::string, std::int64_t> completed;
  std::map<std::string, std::int64_t> forecast;
  std::ifstream in(records);
  for (std::string line; std::getline(in, line);) {
    const boost::json::object o = boost::json::parse(line).as_object();
    const std::string run(o.at("run").as_string());
    ++attempts[run];
    completed[run] += o.at("outcome").as_string() == "completed" ? 1 : 0;
    forecast[run] += o.at("ttft_forecast_s").is_null() ? 0 : 1;
  }
  const boost::json::array runs = boost::json::parse([&] {
                                    std::ifstream j(json);
                                    return std::string(std::istreambuf_iterator<char>(j), {});
                                  }())
                                      .as_array();
  ASSERT_EQ(runs.size(), 2U);
  for (const boost::json::value& v : runs) {
    const boost::json::object& s = v.as_object();
    const std::string policy(s.at("policy").as_string());
    EXPECT_EQ(attempts[policy], s.at("offered").to_number<std::int64_t>()) << policy;
    EXPECT_EQ(completed[policy], s.at("completed").to_number<std::int64_t>()) << policy;
  }
  EXPECT_EQ(forecast["predictive"], 0);
  EXPECT_GT(forecast["forecast"], 0) << "the forecast policy records what it admitted on";
}

TEST(SimCommandTest, BadFlagsExitTwoNamingTheFlagAndWriteNothing) {
  testing_util::TempDir dir;
  const std::string records = (dir.path() / "records.jsonl").string();
  const std::vector<std::vector<std::string>> cases = {
      {"--policy", ""},
      {"--policy", "predictive,forecast"},
      {"--compare", "forecast,"},
      {"--compare", "predictive,,forecast"},
      {"--compare", "predictive,fcfs"},
      {"--compare", "forecast,forecast"},
      {"--kv-headroom", ""},
      {"--fair-share-min-ratio", ""},
      {"--measure-capacity", "--records"},
  };
  for (std::vector<std::string> args : cases) {
    const std::string given = args[0] + " '" + args[1] + "'";
    if (args[1] == "--records") {
      args.pop_back();  // a flag with --records after it
    }
    args.insert(args.end(), {"--records", records});
    const CommandResult r = SimCommand(args);
    EXPECT_EQ(r.exit_code, 2) << given << "\n" << r.output;
    EXPECT_NE(r.output.find(args[0]), std::string::npos) << given << " names the flag\n"
                                                         << r.output;
    EXPECT_FALSE(fs::exists(records)) << given;
  }
}

TEST(SimCommandTest, AnOutOfRangeNumberOrABoolWordGetsOneMessageSayingWhatIsWanted) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--rate-multiplier", "-1"},
       "--rate-multiplier: must be a finite number > 0 and <= 100, got -1\n"},
      {{"--time-scale", "1x"}, "--time-scale: must be a finite number > 0 and <= 1e+06, got 1x\n"},
      {{"--prediction-quantile", "1.5"},
       "--prediction-quantile: must be a finite number >= 0 and <= 1, got 1.5\n"},
      {{"--enable-prefix-caching", "maybe"},
       "--enable-prefix-caching: must be true or false, got 'maybe'\n"},
  };
  for (const auto& [args, message] : cases) {
    const CommandResult r = SimCommand(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << "\n" << r.output;
    EXPECT_EQ(r.output.rfind(message, 0), 0U) << args[0] << ": one message, first\n" << r.output;
  }
  // The lower bound of a closed range is allowed; CLI11's own bool words still read.
  EXPECT_EQ(SimCommand({"--scrape-interval-s", "0.01", "--enable-prefix-caching", "On"}).exit_code,
            0);
}

// A port out of range says what a port is (CLI11 said "Could not convert: --port = 80000").
TEST(SimCommandTest, TheGpuPriceComesFromAPolicyFileAsThePolicySaysIt) {
  testing_util::TempDir dir;
  const std::string json = (dir.path() / "run.json").string();
  const std::string policy = std::string(SPILLWAY_SOURCE_DIR) + "/policies/reference.yaml";
  CommandResult r = SimCommand({"--gpu-price-from", policy, "--json", json});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(json);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_DOUBLE_EQ(boost::json::parse(text).at("gpu_hour_usd").as_double(), 5.12);  // its cost
  // Not beside --gpu-hour-usd; a file that is not a policy, or one without a price: exit 2.
  r = SimCommand({"--gpu-price-from", policy, "--gpu-hour-usd", "3"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("excludes"), std::string::npos) << r.output;
  const std::string scenario = std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/seed-burst.yaml";
  r = SimCommand({"--gpu-price-from", scenario});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--gpu-price-from: " + scenario), std::string::npos) << r.output;
  const std::string unpriced = (dir.path() / "p.yaml").string();
  std::ifstream reference(policy);
  std::string yaml((std::istreambuf_iterator<char>(reference)), std::istreambuf_iterator<char>());
  yaml.replace(yaml.find("value: 5.12"), 11, "value: 0");  // policy init's "not set"
  std::ofstream(unpriced) << yaml;
  r = SimCommand({"--gpu-price-from", unpriced});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cost.gpu_hour_usd is not set"), std::string::npos) << r.output;
}

TEST(SimCommandTest, ServeAndGatewayNameTheRangeOfAPort) {
  for (const char* command : {"serve", "gateway"}) {
    for (const char* port : {"80000", "-1", "http"}) {
      std::vector<std::string> argv = {SPILLWAY_BINARY, command, "--port", port};
      if (std::string(command) == "gateway") {
        argv.insert(argv.end(), {"--endpoint", "http://127.0.0.1:1"});
      }
      const CommandResult r = RunCommand(argv, 30);
      EXPECT_EQ(r.exit_code, 2) << command << " " << port << "\n" << r.output;
      EXPECT_EQ(
          r.output.rfind(
              std::string("--port: must be a port number 0 to 65535, got '") + port + "'\n", 0),
          0U)
          << r.output;
    }
  }
}

TEST(SimCommandTest, AnUnknownProfileInTheScenarioNamesItsLine) {
  testing_util::TempDir dir;
  const std::string scenario = (dir.path() / "s.yaml").string();
  std::ifstream in(std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/seed-burst.yaml");
  std::ofstream out(scenario);
  int profile_line = 0;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.rfind("  profile:", 0) == 0) {
      line = "  profile: no-such-profile";
      profile_line = n;
    }
    out << line << "\n";
  }
  out.close();
  ASSERT_GT(profile_line, 0) << "seed-burst.yaml names its profile";
  const CommandResult r =
      RunCommand({SPILLWAY_BINARY, "sim", "--scenario", scenario}, /*timeout_s=*/60);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(scenario + ":" + std::to_string(profile_line) +
                          ": engine.profile: profile 'no-such-profile' not found"),
            std::string::npos)
      << r.output;
}

TEST(SimCommandTest, OutputsFollowSymlinksAndRefuseDirectoriesAndEachOther) {
  testing_util::TempDir dir;
  const fs::path target = dir.path() / "target.jsonl";
  const fs::path link = dir.path() / "link.jsonl";
  fs::create_symlink(target, link);
  const CommandResult r = SimCommand({"--records", link.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link))) << "the link is kept";
  EXPECT_GT(fs::file_size(target), 0U) << "and the file it points to written";
  const CommandResult same = SimCommand({"--records", link.string(), "--json", target.string()});
  EXPECT_EQ(same.exit_code, 2) << same.output;
  EXPECT_NE(same.output.find("--json and --records name the same file"), std::string::npos)
      << same.output;
  for (const std::string& directory : {dir.path().string(), dir.path().string() + "/new/"}) {
    const CommandResult d = SimCommand({"--records", directory});
    EXPECT_EQ(d.exit_code, 1) << d.output;
    EXPECT_NE(d.output.find("cannot write --records " + directory + ": Is a directory"),
              std::string::npos)
        << d.output;
    EXPECT_EQ(d.output.find("goodput"), std::string::npos) << "refused before the run";
  }
}

}  // namespace
}  // namespace spillway
