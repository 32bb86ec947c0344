#include "report/gnuplot_charts.h"

#include <gtest/gtest.h>

#include <map>

#include "report/chart_data.h"
#include "report_test_util.h"

namespace spillway {
namespace {

using report_test::Count;
using report_test::TinyRun;

std::map<std::string, std::string> Files(const GnuplotJob& job) {
  return {job.files.begin(), job.files.end()};
}

TEST(ReportChartsTest, QuotesTextForGnuplot) {
  EXPECT_EQ(GnuplotQuote("it's"), "'it''s'");
  EXPECT_EQ(GnuplotQuote("a\nb\\c"), "'a b\\c'");  // one line; backslash is literal in '...'
}

TEST(ReportChartsTest, OneScriptDrawsEveryChartFromItsDataFiles) {
  const std::vector<RunSummary> runs = {TinyRun("unbounded"), TinyRun("predictive")};
  const GnuplotJob job = BuildGnuplotJob(runs, {"unbounded", "it's predictive"});
  const auto files = Files(job);
  ASSERT_TRUE(files.count(job.script));
  const std::string& script = files.at(job.script);
  std::vector<std::string> svgs;
  for (const ChartSpec& c : job.charts) {
    svgs.push_back(c.svg);
    EXPECT_EQ(Count(script, "set output '" + c.svg + "'"), 1) << c.svg;
    EXPECT_FALSE(c.caption.empty());
  }
  EXPECT_EQ(svgs,
            (std::vector<std::string>{"goodput.svg", "traffic.svg", "waiting.svg", "kv_usage.svg",
                                      "ttft_cdf.svg", "shed.svg", "engine_time.svg"}));
  for (const char* data : {"gnuplot/run0.dat", "gnuplot/run1.dat", "gnuplot/ttft0.dat",
                           "gnuplot/shed.dat", "gnuplot/engine_time.dat"}) {
    EXPECT_TRUE(files.count(data)) << data;
    EXPECT_NE(script.find(std::string("'") + data + "'"), std::string::npos) << data;
  }
  EXPECT_NE(script.find("title 'it''s predictive'"), std::string::npos);
  EXPECT_NE(script.find("noenhanced"), std::string::npos);
  // The higher-rate phase is shaded and both phases are labelled; the TTFT SLO is drawn.
  EXPECT_EQ(Count(script, "rect from 2, graph 0 to 4, graph 1"), 4);  // 4 time charts
  EXPECT_NE(script.find("'20 req/s offered'"), std::string::npos);
  EXPECT_NE(script.find("'TTFT SLO 1 s'"), std::string::npos);
  EXPECT_TRUE(job.notes.empty());
  EXPECT_EQ(script.find("title 'retries'"), std::string::npos) << "no run retried";
}

TEST(ReportChartsTest, RunsWithTtftForecastsGetACalibrationChart) {
  RunSummary forecast = TinyRun("forecast");
  forecast.ttft_calibration = {{0.0, 10, 0.04, 0.09}, {0.5, 3, 0.6, 0.8}};
  const GnuplotJob job = BuildGnuplotJob({TinyRun("predictive"), forecast}, {"p", "f"});
  const auto files = Files(job);
  const std::string& script = files.at(job.script);
  EXPECT_EQ(Count(script, "set output 'ttft_calibration.svg'"), 1);
  EXPECT_EQ(files.count("gnuplot/calibration0.dat"), 0u);  // predictive predicted nothing
  EXPECT_EQ(files.at("gnuplot/calibration1.dat"), "0.05 0.04 0.09 10\n0.55 0.6 0.8 3\n");
  EXPECT_NE(script.find("title 'f: actual mean'"), std::string::npos) << script;
}

TEST(ReportChartsTest, TrafficChartDrawsRetriesForARunThatRetried) {
  RunSummary storm = TinyRun("fixed");
  storm.retries = 5;
  storm.timeseries[1].retries = 5;
  const GnuplotJob job = BuildGnuplotJob({storm, TinyRun("calm")}, {"fixed", "calm"});
  const std::string script = Files(job).at(job.script);  // a copy: Files returns a temporary
  EXPECT_EQ(Count(script, "'gnuplot/run0.dat' using 1:11"), 1) << script;
  EXPECT_EQ(Count(script, "'gnuplot/run1.dat' using 1:11"), 0) << script;
  EXPECT_NE(TimeseriesData(storm, "fixed").find(" 50 5\n"), std::string::npos);
}

TEST(ReportChartsTest, ChartsWithoutDataAreLeftOutWithANote) {
  RunSummary bare = TinyRun("x");
  bare.timeseries.clear();
  bare.ttft_histogram_s = {};
  bare.rejected_by_reason.clear();
  const GnuplotJob job = BuildGnuplotJob({bare}, {"x"});
  ASSERT_EQ(job.charts.size(), 1u);  // the engine-time bars always have their two values
  EXPECT_EQ(job.charts[0].svg, "engine_time.svg");
  EXPECT_EQ(job.notes.size(), 3u);
}

TEST(ReportChartsTest, DataFilesHoldTheNumbers) {
  const RunSummary run = TinyRun("x");
  const std::string ts = TimeseriesData(run, "x");
  EXPECT_NE(ts.find("\n1.5 2 0 0 1 0 1 3 1 50 0\n"), std::string::npos) << ts;
  const auto cdf = CdfPoints(run.ttft_histogram_s);  // one sample, TTFT 0.3 s: (0.25, 0.315]
  ASSERT_EQ(cdf.size(), 2u);
  EXPECT_EQ(cdf[0], std::make_pair(0.25, 0.0));
  EXPECT_EQ(cdf[1], std::make_pair(0.315, 1.0));
  const BarTable shed = ShedByReason({run, TinyRun("y")});
  EXPECT_EQ(shed.categories, (std::vector<std::string>{"queue_delay_exceeded"}));
  EXPECT_EQ(BarData(shed), "# category_index value_per_run...\n# queue_delay_exceeded\n0 1 1\n");
}

}  // namespace
}  // namespace spillway
