// The report renders in a real browser from disk: headless Chromium (Debian package
// `chromium`) takes a screenshot of index.html, and a copy of the page with a probe script
// reports that every chart image loaded. Skipped when chromium is not installed (`make deps`
// installs it). Each Chromium run is bounded by a timeout; --no-sandbox lets it run as root.

#include <gtest/gtest.h>

#include <filesystem>

#include "common/run_command.h"
#include "common/sanitizer.h"
#include "common/temp_dir.h"
#include "report_test_util.h"

namespace spillway {
namespace {

namespace fs = std::filesystem;
using report_test::Count;
using report_test::ReadFile;
using testing_util::CommandResult;
using testing_util::RunCommand;

constexpr double kChromiumTimeoutS = 90;

// Width and height of a PNG, from its IHDR chunk; {0, 0} when `png` is not one.
std::pair<std::uint32_t, std::uint32_t> PngSize(const std::string& png) {
  if (png.size() < 24 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) {
    return {0, 0};
  }
  auto be32 = [&png](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      v = (v << 8) | static_cast<unsigned char>(png[at + i]);
    }
    return v;
  };
  return {be32(16), be32(20)};
}

class ReportChromiumTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing_util::kUnderAddressSanitizer) {
      // Chromium's CPU (about 18 s under the ASan job's load), not the report's code, which
      // the other report tests run under ASan: the release suite renders it.
      GTEST_SKIP() << "Chromium's rendering is checked by the release suite";
    }
    chromium_ = testing_util::FindOnPath("chromium").value_or("");
    if (chromium_.empty()) {
      GTEST_SKIP() << "needs chromium (Debian package chromium; `make deps` installs it)";
    }
    if (!testing_util::FindOnPath("gnuplot")) {
      GTEST_SKIP() << "needs gnuplot (Debian package gnuplot-nox; `make deps` installs it)";
    }
  }

  CommandResult Chromium(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {chromium_,
                                     "--headless",
                                     "--disable-gpu",
                                     "--no-sandbox",
                                     "--no-first-run",
                                     "--hide-scrollbars",
                                     "--user-data-dir=" + (dir_.path() / "profile").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, kChromiumTimeoutS);
  }

  // A report of the reference burst under two policies, in dir_/report.
  fs::path MakeReport() {
    const std::string scenario = std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/seed-burst.yaml";
    const std::string json = (dir_.path() / "runs.json").string();
    const fs::path out = dir_.path() / "report";
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"sim", "--scenario", scenario, "--compare",
                                   "unbounded,predictive", "--json", json},
          std::vector<std::string>{"report", json, "--out", out.string()}}) {
      std::vector<std::string> argv = {SPILLWAY_BINARY};
      argv.insert(argv.end(), args.begin(), args.end());
      const CommandResult r = RunCommand(argv, 120);
      EXPECT_EQ(r.exit_code, 0) << r.description << "\n" << r.output;
    }
    return out;
  }

  std::string chromium_;
  testing_util::TempDir dir_;
};

TEST_F(ReportChromiumTest, ScreenshotShowsMoreThanABlankPage) {
  const fs::path out = MakeReport();
  const fs::path blank = dir_.Write("blank.html", "<!DOCTYPE html><html><body></body></html>");
  const fs::path shot = dir_.path() / "report.png";
  const fs::path blank_shot = dir_.path() / "blank.png";
  for (const auto& [page, png] :
       {std::pair{out / "index.html", shot}, std::pair{blank, blank_shot}}) {
    const CommandResult r = Chromium(
        {"--screenshot=" + png.string(), "--window-size=1200,2000", "file://" + page.string()});
    ASSERT_TRUE(r.exited) << r.description << "\n" << r.output;
    ASSERT_TRUE(fs::exists(png)) << r.description << "\n" << r.output;
  }
  const std::string report_png = ReadFile(shot.string());
  const std::string blank_png = ReadFile(blank_shot.string());
  EXPECT_EQ(PngSize(report_png), (std::pair<std::uint32_t, std::uint32_t>{1200, 2000}));
  // A blank page compresses to a few kB; tables, text and charts do not.
  EXPECT_GT(report_png.size(), 10 * blank_png.size())
      << report_png.size() << " bytes vs blank " << blank_png.size();
}

TEST_F(ReportChromiumTest, EveryChartImageLoads) {
  const fs::path out = MakeReport();
  std::string html = ReadFile((out / "index.html").string());
  const int images = Count(html, "<img ");
  ASSERT_GT(images, 0);
  // The same page plus a script that, once everything loaded, counts the decoded images.
  const std::string probe =
      "<script>window.addEventListener('load', () => { const all = [...document.images]; "
      "const ok = all.filter(i => i.complete && i.naturalWidth > 0).length; "
      "document.body.setAttribute('data-images-loaded', ok + ' of ' + all.length); });"
      "</script>\n</body>";
  html.replace(html.rfind("</body>"), 7, probe);
  std::ofstream(out / "probe.html") << html;
  const CommandResult r = Chromium(
      {"--virtual-time-budget=10000", "--dump-dom", "file://" + (out / "probe.html").string()});
  ASSERT_TRUE(r.exited) << r.description << "\n" << r.output;
  const std::string want =
      "data-images-loaded=\"" + std::to_string(images) + " of " + std::to_string(images) + "\"";
  EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n" << r.output.substr(0, 2000);
}

}  // namespace
}  // namespace spillway
