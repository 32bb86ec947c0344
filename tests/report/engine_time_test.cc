// Engine time a run did not measure (a bench run against a server without the counter) is
// never shown as 0: nullopt in the summary, null in the JSON, "n/a" in the table and in the
// chart (no bar). The simulator always measures it.

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "report/chart_data.h"
#include "report/run_recorder.h"
#include "report/summary_json.h"
#include "report/summary_reader.h"
#include "report/table.h"

namespace spillway {
namespace {

// The cells of row `label` of the comparison of `runs`.
std::vector<std::string> Cells(const std::vector<RunSummary>& runs, const std::string& label) {
  for (const TableRow& row : CompareRows(runs)) {
    if (row.label == label) {
      return row.cells;
    }
  }
  ADD_FAILURE() << "no row " << label;
  return {};
}

RunSummary Measured() {
  RunRecorder r(GoodputSlo{}, {});
  r.OnEngineStep(2.0, 0.5, 10);
  r.SetNotCompletedEngineTime(1.25);
  RunSummary s = r.Finish(1, 1);
  s.policy = "sim";
  return s;
}

RunSummary NotMeasured() {
  RunSummary s = Measured();
  s.policy = "bench";
  s.engine_busy_s.reset();
  s.wasted_engine_s.reset();
  s.not_completed_engine_s.reset();
  return s;
}

TEST(EngineTimeTest, TheRecorderMeasuresEvenARunWithoutSteps) {
  const RunSummary s = RunRecorder(GoodputSlo{}, {}).Finish(1, 1);
  EXPECT_EQ(s.engine_busy_s, 0.0);
  EXPECT_EQ(s.wasted_engine_s, 0.0);
  EXPECT_EQ(s.not_completed_engine_s, 0.0);
}

TEST(EngineTimeTest, TheTableSaysNaWhereARunDidNotMeasure) {
  const std::vector<RunSummary> runs = {Measured(), NotMeasured()};
  EXPECT_EQ(Cells(runs, "engine busy s"), (std::vector<std::string>{"2.0", "n/a"}));
  EXPECT_EQ(Cells(runs, "wasted engine s (client gone)"), (std::vector<std::string>{"0.5", "n/a"}));
  EXPECT_EQ(Cells(runs, "engine s on not-completed"), (std::vector<std::string>{"1.2", "n/a"}));
}

TEST(EngineTimeTest, NotMeasuredIsNullInJsonAndReadsBackAsNotMeasured) {
  const std::string json = SummariesToJson({Measured(), NotMeasured()});
  EXPECT_NE(json.find("\"engine_busy_s\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"wasted_engine_s\": null"), std::string::npos);
  EXPECT_NE(json.find("\"not_completed_engine_s\": null"), std::string::npos);
  const std::vector<RunSummary> runs = ParseRunSummaries(json, "runs.json");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].engine_busy_s, 2.0);
  EXPECT_EQ(runs[0].wasted_engine_s, 0.5);
  EXPECT_EQ(runs[0].not_completed_engine_s, 1.25);
  EXPECT_FALSE(runs[1].engine_busy_s.has_value());
  EXPECT_FALSE(runs[1].wasted_engine_s.has_value());
  EXPECT_FALSE(runs[1].not_completed_engine_s.has_value());
  EXPECT_EQ(Cells(runs, "engine s on not-completed"), (std::vector<std::string>{"1.2", "n/a"}));
}

TEST(EngineTimeTest, TheKeysStayRequiredAndTyped) {
  const std::string one = SummaryToJson(Measured());
  const auto error_of = [](const std::string& text) -> std::string {
    try {
      ParseRunSummaries(text, "run.json");
    } catch (const RunJsonError& e) {
      return e.what();
    }
    return "(no error)";
  };
  std::string renamed = one;
  renamed.replace(renamed.find("\"wasted_engine_s\""), 17, "\"wasted_engine\"");
  EXPECT_EQ(error_of(renamed), "run.json: key 'wasted_engine_s': missing");
  std::string typed = one;
  const std::size_t at = typed.find("\"engine_busy_s\": ");
  ASSERT_NE(at, std::string::npos) << one;
  typed.replace(at, typed.find(',', at) - at, "\"engine_busy_s\": \"2\"");
  EXPECT_EQ(error_of(typed),
            "run.json: key 'engine_busy_s': expected a number or null, got a string");
  // not_completed_engine_s is optional: JSON written before it reads as not measured.
  std::string old = one;
  old.replace(old.find("\"not_completed_engine_s\""), 24, "\"something_else\"");
  const std::vector<RunSummary> runs = ParseRunSummaries(old, "old.json");
  EXPECT_FALSE(runs[0].not_completed_engine_s.has_value());
  EXPECT_EQ(runs[0].wasted_engine_s, 0.5);
}

TEST(EngineTimeTest, TheChartHasNoBarForANotMeasuredRun) {
  const BarTable t = EngineTime({Measured(), NotMeasured()});
  ASSERT_EQ(t.values.size(), 2u);
  EXPECT_DOUBLE_EQ(t.values[0][0], 0.5);
  EXPECT_TRUE(std::isnan(t.values[0][1]));
  EXPECT_DOUBLE_EQ(t.values[1][0], 1.25);
  EXPECT_TRUE(std::isnan(t.values[1][1]));
  const std::string data = BarData(t);
  EXPECT_NE(data.find("0 0.5 n/a\n"), std::string::npos) << data;
  EXPECT_NE(data.find("1 1.25 n/a\n"), std::string::npos) << data;
}

}  // namespace
}  // namespace spillway
