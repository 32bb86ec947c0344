// `spillway report` end to end: on two `spillway sim` runs it writes index.html and one
// non-empty SVG per chart; bad inputs give exit code 2 and an error naming the file and key;
// without gnuplot it says which package to install. Needs gnuplot (Debian package
// gnuplot-nox); the tests that draw are skipped without it.

#include <gtest/gtest.h>

#include <filesystem>
#include <string_view>

#include "common/run_command.h"
#include "common/temp_dir.h"
#include "report_test_util.h"

namespace spillway {
namespace {

namespace fs = std::filesystem;
using report_test::ReadFile;
using testing_util::CommandResult;
using testing_util::RunCommand;

constexpr double kTimeoutS = 120;

CommandResult Spillway(const std::vector<std::string>& args,
                       const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv = {SPILLWAY_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, kTimeoutS, env);
}

// The image files index.html refers to (no std::regex: GCC 12 under ASan warns inside it).
std::vector<std::string> ImageSources(const std::string& html) {
  std::vector<std::string> out;
  constexpr std::string_view kOpen = "<img src=\"";
  for (std::size_t pos = html.find(kOpen); pos != std::string::npos; pos = html.find(kOpen, pos)) {
    pos += kOpen.size();
    const std::size_t end = html.find('"', pos);
    if (end == std::string::npos) {
      break;
    }
    out.push_back(html.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

class ReportCommandTest : public ::testing::Test {
 protected:
  // A `sim --json` run of the reference burst with `policy`, written to the temp dir.
  std::string SimJson(const std::string& policy) {
    const std::string json = (dir_.path() / (policy + ".json")).string();
    const CommandResult r = Spillway(
        {"sim", "--scenario", std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/seed-burst.yaml",
         "--policy", policy, "--json", json});
    EXPECT_EQ(r.exit_code, 0) << r.description << "\n" << r.output;
    return json;
  }

  void RequireGnuplot() {
    if (!testing_util::FindOnPath("gnuplot")) {
      GTEST_SKIP() << "needs gnuplot (Debian package gnuplot-nox; `make deps` installs it)";
    }
  }

  testing_util::TempDir dir_;
};

TEST_F(ReportCommandTest, TwoSimRunsGiveAPageAndNonEmptySvgs) {
  RequireGnuplot();
  const std::string unbounded = SimJson("unbounded");
  const std::string predictive = SimJson("predictive");
  const fs::path out = dir_.path() / "report";
  const CommandResult r = Spillway({"report", unbounded, predictive, "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.description << "\n" << r.output;
  EXPECT_NE(r.output.find("report of 2 run(s), 7 chart(s)"), std::string::npos) << r.output;
  const std::string html = ReadFile((out / "index.html").string());
  EXPECT_NE(html.find("<title>Spillway report: seed-burst</title>"), std::string::npos);
  EXPECT_NE(html.find("goodput req/s, 30-90 s @ 30/s"), std::string::npos);
  const std::vector<std::string> images = ImageSources(html);
  EXPECT_EQ(images.size(), 7u);
  for (const std::string& image : images) {
    const std::string svg = ReadFile((out / image).string());
    EXPECT_GT(svg.size(), 1000u) << image;
    EXPECT_NE(svg.find("<svg"), std::string::npos) << image;
    EXPECT_NE(svg.find("</svg>"), std::string::npos) << image;
    EXPECT_EQ(svg.find("<script"), std::string::npos) << image;  // nothing to fetch or run
  }
  // The legend names both runs; the data and script stay beside the page.
  EXPECT_NE(ReadFile((out / "goodput.svg").string()).find(">predictive<"), std::string::npos);
  EXPECT_TRUE(fs::exists(out / "gnuplot" / "charts.gp"));
}

TEST_F(ReportCommandTest, AnArrayFromCompareIsThreeRuns) {
  RequireGnuplot();
  const std::string json = (dir_.path() / "runs.json").string();
  ASSERT_EQ(Spillway({"sim", "--scenario",
                      std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/seed-burst.yaml", "--compare",
                      "unbounded,tail-drop,predictive", "--json", json})
                .exit_code,
            0);
  const fs::path out = dir_.path() / "report";
  const CommandResult r = Spillway({"report", json, "--out", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string html = ReadFile((out / "index.html").string());
  for (const char* policy : {"unbounded", "tail-drop", "predictive"}) {
    EXPECT_NE(html.find(std::string(policy) + "</th>"), std::string::npos) << policy;
  }
}

TEST_F(ReportCommandTest, BadInputsExitTwoNamingTheFileAndKey) {
  const std::string missing = (dir_.path() / "missing.json").string();
  const std::string invalid = dir_.Write("invalid.json", "{\"policy\": ");
  const std::string no_key = dir_.Write("no_key.json", "{\"policy\": \"x\"}");
  const std::string empty = dir_.Write("empty.json", "[]");
  const std::string out = (dir_.path() / "out").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {missing, missing + ": cannot open file"},
      {invalid, invalid + ": invalid JSON at line 1, column 12"},
      {no_key, no_key + ": key 'offered': missing"},
      {empty, empty + ": an empty array: no run to report"},
      {dir_.path().string(), dir_.path().string() + ": is a directory"},
  };
  for (const auto& [file, message] : cases) {
    const CommandResult r = Spillway({"report", file, "--out", out});
    EXPECT_EQ(r.exit_code, 2) << file << ": " << r.description << "\n" << r.output;
    EXPECT_NE(r.output.find("spillway report: " + message), std::string::npos) << r.output;
  }
  EXPECT_FALSE(fs::exists(out)) << "nothing is written for bad input";
}

TEST_F(ReportCommandTest, WithoutGnuplotItNamesThePackage) {
  const std::string json = SimJson("predictive");
  const fs::path empty_path = dir_.path() / "empty-path";
  fs::create_directories(empty_path);
  const CommandResult r = Spillway({"report", json, "--out", (dir_.path() / "out").string()},
                                   {"PATH=" + empty_path.string()});
  EXPECT_EQ(r.exit_code, 1) << r.description << "\n" << r.output;
  EXPECT_NE(r.output.find("gnuplot not found on PATH; install the Debian package gnuplot-nox"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace spillway
