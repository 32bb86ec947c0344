#include "report/run_recorder.h"

#include <gtest/gtest.h>

#include "report/summary_json.h"
#include "report/table.h"

namespace spillway {
namespace {

RequestOutcome Completed(Seconds sent, Seconds first, Seconds done, std::int32_t tokens) {
  return {RequestOutcome::Kind::kCompleted, sent, first, done, tokens};
}

TEST(RunRecorderTest, GoodMeansWithinEverySloGiven) {
  RunRecorder r(GoodputSlo{1.0, 0.05, std::nullopt}, {});
  // TTFT 0.5 s, TPOT (2.5 - 0.5) / (41 - 1) = 0.05 s: good (bounds are inclusive).
  EXPECT_TRUE(r.IsGood(Completed(0, 0.5, 2.5, 41)));
  EXPECT_FALSE(r.IsGood(Completed(0, 1.2, 2.5, 41)));  // TTFT over
  EXPECT_FALSE(r.IsGood(Completed(0, 0.5, 2.6, 41)));  // TPOT 0.0525 over
  EXPECT_TRUE(r.IsGood(Completed(0, 0.5, 0.5, 1)));    // one token: no TPOT
  EXPECT_FALSE(r.IsGood({RequestOutcome::Kind::kAbandoned, 0, 0.5, 2.0, 10}));
}

TEST(RunRecorderTest, SummaryArithmeticMatchesHandComputedValues) {
  RunRecorder r(GoodputSlo{1.0, std::nullopt, std::nullopt}, {{0, 10, 2.0}, {10, 20, 6.0}});
  for (double t : {1.0, 2.0, 11.0, 12.0, 13.0}) {
    r.OnOffered(t, true);
  }
  r.OnOffered(14.0, false);  // a retry
  r.OnAdmitted(1.0, 1.0, false);
  r.OnAdmitted(2.0, 2.0, true);
  r.OnAdmitted(11.0, 11.0, false);
  r.OnRejected(12.0, 12.0, 429, "queue_delay_exceeded");
  r.OnRejected(13.0, 13.0, 503, "queue_full");
  r.OnRejected(14.0, 14.0, 429, "queue_delay_exceeded");
  r.OnRequestDone(Completed(1.0, 1.5, 3.0, 4));  // TTFT 0.5: good, e2e 2.0
  r.OnRequestDone(Completed(2.0, 3.5, 5.0, 4));  // TTFT 1.5: not good, e2e 3.0
  r.OnRequestDone({RequestOutcome::Kind::kAbandoned, 11.0, kNever, 13.0, 0});
  r.OnEngineStep(2.0, 0.5, 100);
  r.OnEngineStep(1.0, 0.0, 0);
  r.OnGauges(3, 7, 2, 0.25);
  const RunSummary s = r.Finish(20.0, 21.0);

  EXPECT_EQ(s.offered, 6);
  EXPECT_EQ(s.first_attempts, 5);
  EXPECT_EQ(s.retries, 1);
  EXPECT_EQ(s.admitted, 3);
  EXPECT_EQ(s.degraded, 1);
  EXPECT_EQ(s.rejected_total, 3);
  EXPECT_EQ(s.rejected_by_status.at("429"), 2);
  EXPECT_EQ(s.rejected_by_status.at("503"), 1);
  EXPECT_EQ(s.rejected_by_reason.at("queue_delay_exceeded"), 2);
  EXPECT_EQ(s.completed, 2);
  EXPECT_EQ(s.good, 1);
  EXPECT_EQ(s.abandoned_after_admission, 1);
  EXPECT_DOUBLE_EQ(s.goodput_rps, 1.0 / 20.0);
  EXPECT_DOUBLE_EQ(s.throughput_rps, 2.0 / 20.0);
  EXPECT_DOUBLE_EQ(s.slo_attainment, 1.0 / 6.0);
  EXPECT_DOUBLE_EQ(s.ttft_s.max, 1.5);
  EXPECT_DOUBLE_EQ(s.e2e_s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.tpot_s.p50, 0.5);  // (2.0 - 0.5) / 3 and (3.0 - 1.5) / 3
  EXPECT_DOUBLE_EQ(s.engine_busy_s.value(), 3.0);
  EXPECT_DOUBLE_EQ(s.wasted_engine_s.value(), 0.5);
  EXPECT_EQ(s.prefill_tokens, 100);
  EXPECT_EQ(s.max_waiting, 7);
  // Phases attribute by send time: phase 0 sent 2 (1 good), phase 1 sent 4 incl. the retry.
  ASSERT_EQ(s.phases.size(), 2u);
  EXPECT_EQ(s.phases[0].offered, 2);
  EXPECT_EQ(s.phases[0].good, 1);
  EXPECT_DOUBLE_EQ(s.phases[0].goodput_rps, 0.1);
  EXPECT_EQ(s.phases[1].offered, 4);
  EXPECT_EQ(s.phases[1].rejected, 3);
  // Time series: one point per second up to the last event.
  ASSERT_GE(s.timeseries.size(), 15u);
  EXPECT_EQ(s.timeseries[3].completed, 1);
  EXPECT_EQ(s.timeseries[3].good, 1);
  EXPECT_EQ(s.timeseries[3].waiting, 7);
  EXPECT_DOUBLE_EQ(s.timeseries[3].kv_usage, 0.25);
}

TEST(SummaryJsonTest, HasTheRunSummaryKeys) {
  RunRecorder r(GoodputSlo{}, {});
  r.OnOffered(0.5, true);
  const std::string json = SummaryToJson(r.Finish(1.0, 1.0));
  for (const char* key : {"\"offered\"",       "\"admitted\"",
                          "\"rejected\"",      "\"by_status\"",
                          "\"by_reason\"",     "\"completed\"",
                          "\"goodput_rps\"",   "\"slo_attainment\"",
                          "\"ttft_s\"",        "\"tpot_s\"",
                          "\"itl_s\"",         "\"e2e_s\"",
                          "\"p50\"",           "\"p95\"",
                          "\"p99\"",           "\"abandoned_after_admission\"",
                          "\"engine_busy_s\"", "\"wasted_engine_s\"",
                          "\"max_waiting\"",   "\"preemptions\"",
                          "\"timeseries\"",    "\"kv_usage\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key;
  }
}

TEST(CompareTableTest, OneColumnPerRun) {
  RunRecorder r(GoodputSlo{}, {});
  RunSummary a = r.Finish(1.0, 1.0);
  a.policy = "unbounded";
  RunSummary b = a;
  b.policy = "predictive";
  const std::string table = CompareTable({a, b});
  EXPECT_NE(table.find("unbounded"), std::string::npos);
  EXPECT_NE(table.find("predictive"), std::string::npos);
  EXPECT_NE(table.find("wasted engine s"), std::string::npos);
}

TEST(CompareTableTest, RetryRowsShowTheAmplificationOnlyWhenARunRetried) {
  RunRecorder r(GoodputSlo{}, {});
  r.OnOffered(0.5, true);
  r.OnOffered(0.6, true);
  r.OnOffered(0.7, false);
  r.OnOffered(0.8, false);
  r.OnOffered(0.9, false);
  RunSummary storm = r.Finish(1.0, 1.0);
  EXPECT_EQ(storm.first_attempts, 2);
  EXPECT_EQ(storm.retries, 3);
  RunSummary calm = RunRecorder(GoodputSlo{}, {}).Finish(1.0, 1.0);
  EXPECT_EQ(CompareTable({calm}).find("retries"), std::string::npos);
  const std::string table = CompareTable({storm, calm});
  EXPECT_NE(table.find("first attempts"), std::string::npos) << table;
  EXPECT_NE(table.find("3 (2.50x)"), std::string::npos) << table;
}

TEST(RunRecorderTest, TtftPredictionsAreBinnedByThePrediction) {
  // Predicted 0.05 s, got 0.05 and 0.15 s; predicted 0.42 s, got 0.40 s: bins [0, 0.1) and
  // [0.4, 0.5), with the mean and p95 of what they got.
  RunRecorder rec(GoodputSlo{}, {});
  rec.OnTtftPrediction(0.05, 0.3, 0.05);
  rec.OnTtftPrediction(0.05, 0.3, 0.15);
  rec.OnTtftPrediction(0.42, 0.9, 0.40);
  const RunSummary s = rec.Finish(1, 1);
  ASSERT_EQ(s.ttft_calibration.size(), 2u);
  EXPECT_DOUBLE_EQ(s.ttft_calibration[0].predicted_lo_s, 0.0);
  EXPECT_EQ(s.ttft_calibration[0].count, 2);
  EXPECT_NEAR(s.ttft_calibration[0].actual_mean_s, 0.10, 1e-12);
  EXPECT_NEAR(s.ttft_calibration[1].predicted_lo_s, 0.4, 1e-12);
  EXPECT_EQ(s.ttft_calibration[1].count, 1);
  EXPECT_NEAR(s.ttft_calibration[1].actual_p95_s, 0.40, 1e-12);
  EXPECT_NEAR(s.ttft_prediction_abs_error_s.max, 0.10, 1e-12);
}

TEST(RunRecorderTest, PerClassCountsAndTtftFollowEachAttemptsClass) {
  RunRecorder r(GoodputSlo{1.0, std::nullopt, std::nullopt}, {});
  r.OnOffered(1.0, true, "chat");
  r.OnOffered(2.0, true, "chat");
  r.OnOffered(3.0, true, "document");
  r.OnOffered(4.0, true, "document");
  r.OnOffered(5.0, true);  // no class: counted only in the totals
  r.OnAdmitted(1.0, 1.0, false, "chat");
  r.OnAdmitted(2.0, 2.0, false, "chat");
  r.OnAdmitted(3.0, 3.0, false, "document");
  r.OnRejected(4.0, 4.0, 429, "queue_delay_exceeded", "document");
  r.OnRequestDone(Completed(1.0, 1.5, 3.0, 4), "chat");  // TTFT 0.5: good
  r.OnRequestDone(Completed(2.0, 3.5, 5.0, 4), "chat");  // TTFT 1.5: completed, not good
  r.OnDroppedAtQueueHead(4.0, 3.0, "document");
  const RunSummary s = r.Finish(10.0, 10.0);

  ASSERT_EQ(s.classes.size(), 2u);
  const ClassSummary& chat = s.classes.at("chat");
  EXPECT_EQ(chat.offered, 2);
  EXPECT_EQ(chat.admitted, 2);
  EXPECT_EQ(chat.completed, 2);
  EXPECT_EQ(chat.good, 1);
  EXPECT_EQ(chat.ttft_s.count, 2);
  EXPECT_DOUBLE_EQ(chat.ttft_s.max, 1.5);
  const ClassSummary& document = s.classes.at("document");
  EXPECT_EQ(document.offered, 2);
  EXPECT_EQ(document.admitted, 1);
  EXPECT_EQ(document.rejected, 1);
  EXPECT_EQ(document.dropped, 1);
  EXPECT_EQ(document.completed, 0);
  EXPECT_EQ(document.ttft_s.count, 0);
  EXPECT_EQ(s.offered, 5);
}

}  // namespace
}  // namespace spillway
