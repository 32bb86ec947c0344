#include "report/summary_reader.h"

#include <gtest/gtest.h>

#include "report/run_recorder.h"
#include "report/summary_json.h"
#include "report/table.h"

namespace spillway {
namespace {

RunSummary SampleRun(const std::string& policy) {
  RunRecorder r(GoodputSlo{1.0, std::nullopt, std::nullopt}, {{0, 2, 5.0}, {2, 4, 20.0}});
  r.OnOffered(0.5, true);
  r.OnAdmitted(0.5, 0.5, false);
  r.OnOffered(2.5, true);
  r.OnRejected(2.5, 2.5, 429, "queue_delay_exceeded");
  r.OnRequestDone({RequestOutcome::Kind::kCompleted, 0.5, 0.8, 1.5, 8, "small"});
  r.OnEngineStep(1.0, 0.25, 64);
  r.OnGauges(1, 3, 1, 0.5);
  r.OnQueueSpan(0.5, 4.0);
  r.OnRetryAfter(2.5, 429, "queue_delay_exceeded", 1.0);  // drain 1.5 s: short by 0.5 s
  RunSummary s = r.Finish(4.0, 4.0);
  s.source = "sim";
  s.scenario = "tiny";
  s.policy = policy;
  s.profile = "p";
  s.seed = 7;
  s.objectives.push_back({"e2e_p99_s", 5.0, 1.0, true});
  return s;
}

// `json` with the first occurrence of `from` replaced by `to`.
std::string Replace(std::string json, const std::string& from, const std::string& to) {
  const std::size_t at = json.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? json : json.replace(at, from.size(), to);
}

std::string ErrorOf(const std::string& text) {
  try {
    ParseRunSummaries(text, "runs.json");
  } catch (const RunJsonError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SummaryReaderTest, ReadsBackWhatSummaryToJsonWrites) {
  const RunSummary s = SampleRun("predictive");
  const std::vector<RunSummary> runs = ParseRunSummaries(SummaryToJson(s), "one.json");
  ASSERT_EQ(runs.size(), 1u);
  const RunSummary& r = runs.front();
  EXPECT_EQ(r.policy, "predictive");
  EXPECT_EQ(r.scenario, "tiny");
  EXPECT_EQ(r.seed, 7u);
  EXPECT_EQ(r.offered, 2);
  EXPECT_EQ(r.rejected_by_reason.at("queue_delay_exceeded"), 1);
  EXPECT_EQ(r.rejected_by_status.at("429"), 1);
  EXPECT_DOUBLE_EQ(r.ttft_s.p50, s.ttft_s.p50);
  EXPECT_EQ(r.ttft_histogram_s.bounds, s.ttft_histogram_s.bounds);
  EXPECT_EQ(r.ttft_histogram_s.counts, s.ttft_histogram_s.counts);
  EXPECT_EQ(r.slo.ttft_s, 1.0);
  EXPECT_FALSE(r.slo.tpot_s.has_value());
  EXPECT_DOUBLE_EQ(r.wasted_engine_s.value(), 0.25);
  ASSERT_EQ(r.phases.size(), 2u);
  EXPECT_DOUBLE_EQ(r.phases[1].offered_rate_rps, 20.0);
  ASSERT_EQ(r.objectives.size(), 1u);
  EXPECT_TRUE(r.objectives[0].pass);
  ASSERT_EQ(r.timeseries.size(), s.timeseries.size());
  EXPECT_EQ(r.timeseries[1].waiting, 3);
  EXPECT_DOUBLE_EQ(r.timeseries[1].kv_usage, 0.5);
  EXPECT_EQ(r.retry_after.checked, 1);
  EXPECT_EQ(r.retry_after.shortfalls, 0);
  EXPECT_DOUBLE_EQ(r.retry_after.tolerance_s, 1.0);
  EXPECT_DOUBLE_EQ(r.retry_after.max_shortfall_s, 0.5);
  EXPECT_DOUBLE_EQ(r.retry_after.max_drain_s, 1.5);
  EXPECT_DOUBLE_EQ(r.retry_after.mean_drain_s, 1.5);
  EXPECT_DOUBLE_EQ(r.retry_after.mean_retry_after_s, 1.0);
  ASSERT_EQ(r.served_model.count("small"), 1u);
  EXPECT_EQ(r.served_model.at("small").completed, 1);
  EXPECT_EQ(r.served_model.at("small").good, 1);
  EXPECT_EQ(r.served_model.at("small").phase_goodput_rps, (std::vector<double>{0.5, 0}))
      << "one good request sent in the first 2 s phase";
  EXPECT_DOUBLE_EQ(r.served_model.at("small").ttft_s.p95, 0.3);  // sent 0.5, first token 0.8
  EXPECT_EQ(r.served_model.at("small").ttft_s.count, 1);
}

TEST(SummaryReaderTest, TheTtftCalibrationRoundTrips) {
  RunSummary s = SampleRun("forecast");
  s.ttft_calibration = {{0.0, 12, 0.04, 0.08}, {0.3, 5, 0.38, 0.52}};
  const RunSummary r = ParseRunSummaries(SummaryToJson(s), "one.json").front();
  ASSERT_EQ(r.ttft_calibration.size(), 2u);
  EXPECT_DOUBLE_EQ(r.ttft_calibration[1].predicted_lo_s, 0.3);
  EXPECT_EQ(r.ttft_calibration[1].count, 5);
  EXPECT_DOUBLE_EQ(r.ttft_calibration[1].actual_mean_s, 0.38);
  EXPECT_DOUBLE_EQ(r.ttft_calibration[1].actual_p95_s, 0.52);
}

TEST(SummaryReaderTest, TheClassesAndTheirSharesRoundTrip) {
  RunSummary s = SampleRun("forecast");
  ClassSummary& chat = s.classes["chat"];
  chat.offered = 9;
  chat.first_attempts = 8;
  chat.admitted = 7;
  chat.good = 6;
  ClassSummary& document = s.classes["document"];
  document.offered = 4;
  document.first_attempts = 2;
  document.good = 2;
  const boost::json::object json = boost::json::parse(SummaryToJson(s)).as_object();
  const boost::json::object& shares = json.at("classes").at("document").as_object();
  EXPECT_DOUBLE_EQ(shares.at("offered_share").as_double(), 0.2) << "2 of 10 requests";
  EXPECT_DOUBLE_EQ(shares.at("served_share").as_double(), 0.25) << "2 of 8 good";
  const RunSummary r = ParseRunSummaries(SummaryToJson(s), "one.json").front();
  ASSERT_EQ(r.classes.size(), 2u);
  EXPECT_EQ(r.classes.at("chat").offered, 9);
  EXPECT_EQ(r.classes.at("chat").first_attempts, 8);
  EXPECT_EQ(r.classes.at("chat").admitted, 7);
  EXPECT_EQ(r.classes.at("chat").good, 6);
  const std::vector<TableRow> rows = CompareRows({r});
  const auto row = std::find_if(rows.begin(), rows.end(), [](const TableRow& t) {
    return t.label == "  document served/offered";
  });
  ASSERT_NE(row, rows.end());
  EXPECT_EQ(row->cells.front(), "25.0/20.0%");
}

TEST(SummaryReaderTest, ReadsAnArrayOfRuns) {
  const std::string json = SummariesToJson({SampleRun("unbounded"), SampleRun("predictive")});
  const std::vector<RunSummary> runs = ParseRunSummaries(json, "runs.json");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].policy, "predictive");
}

TEST(SummaryReaderTest, CancellationPropagationIsKnownOnlyWhereTheRunSetIt) {
  RunSummary s = SampleRun("x");
  // A run measured from outside (bench) cannot see it: null, read back as not known.
  EXPECT_NE(SummaryToJson(s).find("\"cancellation_propagation\": null"), std::string::npos);
  EXPECT_FALSE(ParseRunSummaries(SummaryToJson(s), "bench.json")[0].cancellation_propagation);
  s.cancellation_propagation = false;  // the simulator's setting
  EXPECT_EQ(ParseRunSummaries(SummaryToJson(s), "sim.json")[0].cancellation_propagation, false);
}

TEST(SummaryReaderTest, OptionalKeysMayBeMissing) {
  // Only the required keys, as a minimal bench-like writer could produce.
  const std::string p = R"({"p50":0.1,"p95":0.2,"p99":0.3,"mean":0.1,"max":0.4,"count":2})";
  const std::string json =
      R"({"policy":"x","offered":2,"admitted":2,"completed":2,"good":1,"goodput_rps":0.5,)"
      R"("slo_attainment":0.5,"abandoned_after_admission":0,"engine_busy_s":0,)"
      R"("wasted_engine_s":0,"max_waiting":0,"preemptions":0,)"
      R"("rejected":{"total":0,"by_status":{},"by_reason":{}},"ttft_s":)" +
      p + R"(,"tpot_s":)" + p + R"(,"itl_s":)" + p + R"(,"e2e_s":)" + p +
      R"(,"timeseries":[{"t":0,"offered":2,"admitted":2,"rejected":0,"completed":2,"good":1,)"
      R"("waiting":0,"running":0,"kv_usage":0}]})";
  const std::vector<RunSummary> runs = ParseRunSummaries(json, "bench.json");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].ttft_histogram_s.bounds.empty());
  EXPECT_TRUE(runs[0].phases.empty());
  EXPECT_EQ(runs[0].scenario, "");
  EXPECT_EQ(runs[0].retry_after.checked, 0) << "written before the Retry-After check";
  EXPECT_DOUBLE_EQ(runs[0].retry_after.tolerance_s, 1.0);
}

TEST(SummaryReaderTest, ErrorsNameTheInputAndTheKey) {
  const std::string one = SummaryToJson(SampleRun("predictive"));
  EXPECT_EQ(ErrorOf(Replace(one, "\"policy\"", "\"policee\"")), "runs.json: key 'policy': missing");
  EXPECT_EQ(ErrorOf(Replace(one, "\"p95\"", "\"p96\"")), "runs.json: key 'ttft_s.p95': missing");
  EXPECT_EQ(ErrorOf(Replace(one, "\"offered\": 2", "\"offered\": \"2\"")),
            "runs.json: key 'offered': expected an integer, got a string");
  EXPECT_EQ(ErrorOf(Replace(one, "\"offered\": 2", "\"offered\": 2.5")),
            "runs.json: key 'offered': expected an integer, got a number (2.5E0)");
  EXPECT_EQ(ErrorOf(Replace(one, "\"offered\": 2", "\"offered\": -2")),
            "runs.json: key 'offered': expected an integer >= 0, got -2");
  EXPECT_EQ(ErrorOf(Replace(one, "\"waiting\":3", "\"waiting\":null")),
            "runs.json: key 'timeseries[1].waiting': expected an integer, got null");
  EXPECT_EQ(ErrorOf(Replace(one, "\"shortfalls\": 0", "\"shortfalls\": \"0\"")),
            "runs.json: key 'retry_after.shortfalls': expected an integer, got a string");
  const std::string two = SummariesToJson({SampleRun("a"), SampleRun("b")});
  const std::size_t second = two.find("\"timeseries\"", two.find("\"policy\": \"b\""));
  EXPECT_EQ(ErrorOf(two.substr(0, second) + "\"timeseriez\"" + two.substr(second + 12)),
            "runs.json: run 2 of 2: key 'timeseries': missing");
}

TEST(SummaryReaderTest, IntegralNumbersAreAcceptedAsCounts) {
  const std::string one = SummaryToJson(SampleRun("predictive"));
  const auto runs = ParseRunSummaries(Replace(one, "\"offered\": 2", "\"offered\": 2.0"), "x");
  EXPECT_EQ(runs.at(0).offered, 2);
}

TEST(SummaryReaderTest, InvalidJsonAndWrongShapes) {
  EXPECT_EQ(ErrorOf("{\n  \"policy\": \"x\",\n  oops\n}"),
            "runs.json: invalid JSON at line 3, column 3: syntax error");
  EXPECT_EQ(ErrorOf(""), "runs.json: invalid JSON at line 1, column 1: incomplete JSON");
  // A --records file given by mistake says what it is.
  EXPECT_EQ(ErrorOf("{\"request\":0,\"status\":200}\n{\"request\":1,\"status\":429}\n"),
            "runs.json: one JSON value per line (JSON Lines, such as a --records or --timeseries "
            "file); expected a run summary (--json) or an array of them");
  EXPECT_EQ(ErrorOf("[]"), "runs.json: an empty array: no run to report");
  EXPECT_EQ(ErrorOf("\"run\""), "runs.json: expected a run object, got a string");
  EXPECT_EQ(ErrorOf("[1]"), "runs.json: run 1 of 1: expected a run object, got a number (1)");
  const std::string one = SummaryToJson(SampleRun("predictive"));
  EXPECT_EQ(ErrorOf(Replace(one, "\"counts\": [", "\"counts\": [1,")),
            "runs.json: key 'ttft_histogram_s.counts': has 52 entries for 51 bounds");
}

}  // namespace
}  // namespace spillway
