// The soak (scripts/soak.sh, docs/soak.md) shortened to 20 s: the script starts the real
// `spillway serve`, replays scenarios/soak.yaml at 10x capacity with `spillway bench`, samples
// the server's RSS and judges the run with `spillway soak-check`. Checks that it passes, writes
// every file it promises, and that the files agree with each other. About 35 s; run alone
// (RUN_SERIAL), since it loads both cores.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "common/run_command.h"
#include "common/temp_dir.h"
#include "common/text_file.h"

namespace spillway {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using testing_util::CommandResult;
using testing_util::RunCommand;
using testing_util::TempDir;

using testing_util::NonEmptyLines;
using testing_util::ReadTextFile;

TEST(LiveSoakScriptTest, TwentySecondsPassAndWriteEveryOutput) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the soak's load and timing are checked in the release build";
#endif
  const TempDir dir;
  const fs::path out = dir.path() / "soak";
  const CommandResult r = RunCommand(
      {std::string(SPILLWAY_SOURCE_DIR) + "/scripts/soak.sh"}, 120,
      {std::string("SPILLWAY=") + SPILLWAY_BINARY, "SOAK_SECONDS=20", "SOAK_OUT=" + out.string()});
  SCOPED_TRACE("scripts/soak.sh printed:\n" + r.output);
  ASSERT_TRUE(r.exited) << r.description;
  EXPECT_EQ(r.exit_code, 0);

  // The verdict is the last line of verdict.txt, and the script printed it.
  const std::vector<std::string> verdict = NonEmptyLines(ReadTextFile(out / "verdict.txt"));
  ASSERT_FALSE(verdict.empty());
  EXPECT_TRUE(verdict.back().starts_with("soak: PASS (")) << verdict.back();
  EXPECT_NE(r.output.find(verdict.back()), std::string::npos);

  // rss.csv: the header, a sample before the load, one a second during it (the script samples
  // every second below 300 s), and one after.
  const std::vector<std::string> rss = NonEmptyLines(ReadTextFile(out / "rss.csv"));
  ASSERT_FALSE(rss.empty());
  EXPECT_EQ(rss[0], "t_s,rss_bytes,open_fds");
  EXPECT_GE(rss.size(), 1u + 20u);
  for (std::size_t i = 1; i < rss.size(); ++i) {
    EXPECT_EQ(std::count(rss[i].begin(), rss[i].end(), ','), 2) << rss[i];
  }

  // The bench summary: 20 s of arrivals at 111 req/s, most refused at the door.
  const json::value summary = json::parse(ReadTextFile(out / "summary.json"));
  const double offered = summary.at("offered").to_number<double>();
  EXPECT_GT(offered, 1500);  // ~2220 first attempts, plus retries
  EXPECT_EQ(summary.at("duration_s").to_number<double>(), 20);
  EXPECT_GT(summary.at("completed").to_number<double>(), 0);
  // Every attempt has its record line.
  const std::vector<std::string> records = NonEmptyLines(ReadTextFile(out / "records.jsonl"));
  EXPECT_EQ(static_cast<double>(records.size()), offered);
  EXPECT_FALSE(NonEmptyLines(ReadTextFile(out / "timeseries.jsonl")).empty());

  // The server's own process metrics after the run, and the chart.
  const std::string metrics = ReadTextFile(out / "metrics-end.txt");
  EXPECT_NE(metrics.find("\nprocess_resident_memory_bytes "), std::string::npos);
  EXPECT_NE(metrics.find("\nprocess_cpu_seconds_total "), std::string::npos);
  if (testing_util::FindOnPath("gnuplot").has_value()) {
    const std::string svg = ReadTextFile(out / "rss.svg");
    EXPECT_NE(svg.find("<svg"), std::string::npos);
  }
}

TEST(SoakScriptTest, RefusesALengthOutsideItsRange) {
  for (const char* seconds : {"5", "601", "ten"}) {
    const TempDir dir;
    const CommandResult r = RunCommand(
        {std::string(SPILLWAY_SOURCE_DIR) + "/scripts/soak.sh"}, 30,
        {std::string("SPILLWAY=") + SPILLWAY_BINARY, std::string("SOAK_SECONDS=") + seconds,
         "SOAK_OUT=" + (dir.path() / "soak").string()});
    EXPECT_TRUE(r.exited) << r.description;
    EXPECT_EQ(r.exit_code, 2) << seconds << ": " << r.output;
    EXPECT_NE(r.output.find("SOAK_SECONDS must be"), std::string::npos) << r.output;
  }
}

TEST(SoakScriptTest, RefusesBadSettingsBeforeStartingTheLoad) {
  for (const char* setting : {"SOAK_SAMPLE_S=0.0", "SOAK_RSS_BOUND_MIB=abc", "SOAK_RSS_BOUND_MIB=0",
                              "SOAK_POLICY=fifo"}) {
    const TempDir dir;
    const CommandResult r =
        RunCommand({std::string(SPILLWAY_SOURCE_DIR) + "/scripts/soak.sh"}, 30,
                   {std::string("SPILLWAY=") + SPILLWAY_BINARY, "SOAK_SECONDS=10", setting,
                    "SOAK_OUT=" + (dir.path() / "soak").string()});
    EXPECT_TRUE(r.exited) << r.description;
    EXPECT_EQ(r.exit_code, 2) << setting << ": " << r.output;
    EXPECT_NE(r.output.find("must be"), std::string::npos) << r.output;
  }
}

TEST(SoakCheckCommandTest, TheSummaryBoundsTheShareOfTheAdmittedWhosePromiseBroke) {
  // A cold burst of 100 in the simulator: predictive drops 11 of its 38 admitted at the queue
  // head, forecast none of its 27 (tests/sim/forecast_goals_test.cc).
  const TempDir dir;
  // A flat second: samples in its warm-up window [0.2, 0.4) s and its end window [0.8, 1] s.
  const std::string samples = dir.Write(
      "rss.csv", "t_s,rss_bytes,open_fds\n0,1000000,10\n0.3,1000000,10\n0.9,1000000,10\n");
  const auto soak_check = [&](const std::string& records, const std::string& summary) {
    return RunCommand({SPILLWAY_BINARY, "soak-check", "--records", records, "--samples", samples,
                       "--duration-s", "1", "--health-status", "200", "--server-exit-code", "0",
                       "--summary", summary, "--max-broken-share", "0.01"},
                      30);
  };
  for (const std::string policy : {"predictive", "forecast"}) {
    const std::string summary = (dir.path() / (policy + ".json")).string();
    const std::string records = (dir.path() / (policy + ".jsonl")).string();
    const CommandResult sim =
        RunCommand({SPILLWAY_BINARY, "sim", "--scenario",
                    std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/cold-burst-100.yaml", "--policy",
                    policy, "--json", summary, "--records", records},
                   60);
    ASSERT_EQ(sim.exit_code, 0) << sim.output;
    const CommandResult r = soak_check(records, summary);
    EXPECT_EQ(r.exit_code, policy == "forecast" ? 0 : 1) << r.output;
    EXPECT_NE(r.output.find(policy == "forecast" ? "admitted 27: broken 0 (0.00%) ="
                                                 : "11 (28.95%) of 38 admitted broke"),
              std::string::npos)
        << r.output;
  }
  // The summary must be the records' run, with the count judged, and agree with itself (found
  // by a new user: a summary without dropped_at_queue_head passed with 0 broken, and one of
  // another run or with more dropped than admitted passed too).
  const std::string records = (dir.path() / "predictive.jsonl").string();
  const std::string one_record =
      dir.Write("one.jsonl", R"({"status":200,"outcome":"completed","reason":""})"
                             "\n");
  const CommandResult other_run = soak_check(one_record, (dir.path() / "predictive.json").string());
  EXPECT_EQ(other_run.exit_code, 2) << other_run.output;
  EXPECT_NE(other_run.output.find("offered 100 attempts, but the records hold 1"),
            std::string::npos)
      << other_run.output;
  std::ifstream in(dir.path() / "predictive.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto key = text.find("\"dropped_at_queue_head\":");
  ASSERT_NE(key, std::string::npos);
  std::string missing = text;
  missing.replace(key, 1, "\"x");
  const CommandResult no_key = soak_check(records, dir.Write("missing.json", missing));
  EXPECT_EQ(no_key.exit_code, 2) << no_key.output;
  EXPECT_NE(no_key.output.find("dropped_at_queue_head: missing"), std::string::npos)
      << no_key.output;
  std::string too_many = text;
  const auto value = key + std::string("\"dropped_at_queue_head\":").size();
  too_many.replace(value, text.find_first_of(",}", value) - value, "5000");
  const CommandResult inconsistent = soak_check(records, dir.Write("many.json", too_many));
  EXPECT_EQ(inconsistent.exit_code, 2) << inconsistent.output;
  EXPECT_NE(inconsistent.output.find("exceed the 38 admitted"), std::string::npos)
      << inconsistent.output;

  // The bound needs the summary; a summary that is not a run is a usage error, found before
  // anything is written.
  const CommandResult alone = RunCommand(
      {SPILLWAY_BINARY, "soak-check", "--records", records, "--samples", samples, "--duration-s",
       "1", "--health-status", "200", "--server-exit-code", "0", "--max-broken-share", "0.01"},
      30);
  EXPECT_EQ(alone.exit_code, 2) << alone.output;
  const std::string gnuplot = (dir.path() / "rss.gp").string();
  const CommandResult not_a_run =
      RunCommand({SPILLWAY_BINARY, "soak-check", "--records", records, "--samples", samples,
                  "--duration-s", "1", "--health-status", "200", "--server-exit-code", "0",
                  "--summary", samples, "--gnuplot", gnuplot},
                 30);
  EXPECT_EQ(not_a_run.exit_code, 2) << not_a_run.output;
  EXPECT_NE(not_a_run.output.find("rss.csv"), std::string::npos) << not_a_run.output;
  EXPECT_FALSE(fs::exists(gnuplot)) << "nothing written on bad input";
}

TEST(SoakCheckCommandTest, AnUnwritableGnuplotPathIsAUsageErrorNamingThePath) {
  const TempDir dir;
  const std::string records =
      dir.Write("records.jsonl", R"({"status":200,"outcome":"completed","reason":""})"
                                 "\n");
  const std::string samples = dir.Write("rss.csv", "t_s,rss_bytes,open_fds\n0,1000000,10\n");
  const CommandResult r =
      RunCommand({SPILLWAY_BINARY, "soak-check", "--records", records, "--samples", samples,
                  "--duration-s", "10", "--health-status", "200", "--server-exit-code", "0",
                  "--gnuplot", (dir.path() / "missing" / "x.gp").string()},
                 30);
  EXPECT_TRUE(r.exited) << r.description;
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("missing/x.gp"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace spillway
