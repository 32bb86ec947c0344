// BenchRecorder: the summary arithmetic of a bench run, checked against values computed by hand
// from eight fixed attempts, and the server-counter deltas.

#include "loadgen/bench_recorder.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <sstream>
#include <string>

namespace spillway::loadgen {
namespace {

AttemptRecord Attempt(AttemptOutcome outcome, Seconds sent_s, Seconds head_s, Seconds first_s,
                      Seconds finished_s, std::int32_t tokens, int status = 200,
                      std::string reason = "") {
  AttemptRecord r;
  r.outcome = outcome;
  r.sent_s = sent_s;
  r.head_s = head_s;
  r.first_token_s = first_s;
  r.finished_s = finished_s;
  r.output_tokens = tokens;
  r.status = status;
  r.reason = std::move(reason);
  return r;
}

class BenchRecorderTest : public ::testing::Test {
 protected:
  // SLO: TTFT <= 0.5 s and TPOT <= 0.15 s; one Poisson phase [0, 10) at 1 req/s.
  BenchRecorderTest() : recorder_(GoodputSlo{0.5, 0.15, std::nullopt}, {{0, 10, 1.0}}) {}

  void Feed(const AttemptRecord& r) {
    recorder_.OnAttemptStarted();
    recorder_.OnAttemptDone(r);
  }

  void FeedAll() {
    using O = AttemptOutcome;
    // 1. completed: TTFT 0.2, TPOT (1.2 - 0.2) / 10 = 0.1, E2E 1.2: good.
    Feed(Attempt(O::kCompleted, 0.0, 0.01, 0.2, 1.2, 11));
    // 2. completed: TTFT 0.4, TPOT (2.9 - 0.4) / 10 = 0.25 > 0.15: not good.
    Feed(Attempt(O::kCompleted, 0.5, 0.51, 0.9, 3.4, 11));
    // 3-4. refused at the door; 4 is a retry.
    Feed(Attempt(O::kRejected, 1.0, 1.01, kNever, 1.01, 0, 429, "queue_delay_exceeded"));
    AttemptRecord retry = Attempt(O::kRejected, 1.5, 1.51, kNever, 1.51, 0, 503, "queue_full");
    retry.attempt = 2;
    Feed(retry);
    // 5. admitted, dropped at the queue head.
    Feed(
        Attempt(O::kDroppedAtQueueHead, 2.0, 2.01, kNever, 2.8, 0, 200, "queue_deadline_exceeded"));
    // 6. no head before the client's TTFT timeout: admitted (at 4.5) and abandoned.
    Feed(Attempt(O::kAbandoned, 2.5, kNever, kNever, 4.5, 0, 0, "ttft_timeout"));
    // 7. a 504.
    Feed(Attempt(O::kFailed, 3.0, 3.5, kNever, 3.5, 0, 504, "request_timeout"));
    // 8. connection refused.
    Feed(Attempt(O::kTransportError, 3.5, kNever, kNever, 3.5, 0, 0, "connect: refused"));
  }

  BenchRecorder recorder_;
};

TEST_F(BenchRecorderTest, CountsRatesAndPercentilesAsComputedByHand) {
  FeedAll();
  EXPECT_EQ(recorder_.in_flight(), 0);
  EXPECT_EQ(recorder_.offered(), 8);
  EXPECT_EQ(recorder_.shed(), 3);  // two refusals and one drop
  EXPECT_EQ(recorder_.good(), 1);
  EXPECT_EQ(recorder_.transport_errors(), 1);
  const RunSummary s = recorder_.Finish(10, 4.5);
  EXPECT_EQ(s.offered, 8);
  EXPECT_EQ(s.first_attempts, 7);
  EXPECT_EQ(s.retries, 1);
  EXPECT_EQ(s.admitted, 5);  // 1, 2, 5, 6, 7
  EXPECT_EQ(s.rejected_total, 2);
  EXPECT_EQ(s.rejected_by_status.at("429"), 1);
  EXPECT_EQ(s.rejected_by_status.at("503"), 1);
  EXPECT_EQ(s.rejected_by_reason.at("queue_full"), 1);
  EXPECT_EQ(s.offered, s.admitted + s.rejected_total + recorder_.transport_errors());
  EXPECT_EQ(s.dropped_at_queue_head, 1);
  EXPECT_EQ(s.completed, 2);
  EXPECT_EQ(s.good, 1);
  EXPECT_EQ(s.abandoned_after_admission, 1);
  EXPECT_EQ(s.failed, 1);
  EXPECT_DOUBLE_EQ(s.goodput_rps, 0.1);
  EXPECT_DOUBLE_EQ(s.throughput_rps, 0.2);
  EXPECT_DOUBLE_EQ(s.slo_attainment, 1.0 / 8);
  EXPECT_EQ(s.ttft_s.count, 2);
  EXPECT_NEAR(s.ttft_s.p50, 0.2, 1e-12);  // nearest rank of {0.2, 0.4}
  EXPECT_NEAR(s.ttft_s.max, 0.4, 1e-12);
  EXPECT_NEAR(s.tpot_s.mean, 0.175, 1e-12);
  EXPECT_NEAR(s.e2e_s.p99, 2.9, 1e-12);
  EXPECT_DOUBLE_EQ(s.makespan_s, 4.5);
  ASSERT_EQ(s.phases.size(), 1u);
  EXPECT_EQ(s.phases[0].offered, 8);
  EXPECT_EQ(s.phases[0].admitted, 5);
  EXPECT_EQ(s.phases[0].rejected, 2);
  EXPECT_EQ(s.phases[0].dropped, 1);
  EXPECT_DOUBLE_EQ(s.phases[0].goodput_rps, 0.1);
  // Per second, by send time for offered and by event time for the rest.
  ASSERT_GE(s.timeseries.size(), 5u);
  EXPECT_EQ(s.timeseries[0].offered, 2);    // 1, 2
  EXPECT_EQ(s.timeseries[1].offered, 2);    // 3, 4
  EXPECT_EQ(s.timeseries[1].rejected, 2);   // 3, 4
  EXPECT_EQ(s.timeseries[2].rejected, 1);   // 5, dropped at 2.8
  EXPECT_EQ(s.timeseries[3].completed, 1);  // 2, at 3.4
  EXPECT_EQ(s.timeseries[1].good, 1);       // 1, at 1.2
  EXPECT_EQ(s.timeseries[4].admitted, 1);   // 6, counted when the client gave up
}

TEST_F(BenchRecorderTest, ServerCountersBecomeDeltasAndGaugesFillTheSeries) {
  FeedAll();
  recorder_.SampleInFlight(0);
  ServerSnapshot gauges;
  gauges.waiting = 7;
  gauges.running = 3;
  gauges.kv_usage = 0.5;
  recorder_.OnServerGauges(1, gauges);
  ServerSnapshot first;
  first.preemptions = 3;
  first.engine_busy_s = 10;
  first.wasted_engine_s = 1;
  first.prompt_tokens = 100;
  first.recomputed_tokens = 20;
  ServerSnapshot last = first;
  last.preemptions = 5;
  last.engine_busy_s = 14.5;
  last.wasted_engine_s = 1.5;
  last.prompt_tokens = 400;
  last.recomputed_tokens = 50;
  last.service_rate_rps = 9.5;
  recorder_.SetServerTotals(first, last);
  const RunSummary s = recorder_.Finish(10, 4.5);
  EXPECT_EQ(s.preemptions, 2);
  EXPECT_DOUBLE_EQ(s.engine_busy_s.value(), 4.5);
  EXPECT_DOUBLE_EQ(s.wasted_engine_s.value(), 0.5);
  EXPECT_EQ(s.prefill_tokens, 300);
  EXPECT_EQ(s.recomputed_tokens, 30);
  EXPECT_EQ(s.prefix_cache_queries_tokens, 0) << "a server without the counters";
  EXPECT_DOUBLE_EQ(s.est_service_rate_rps, 9.5);
  EXPECT_EQ(s.max_waiting, 7);
  EXPECT_EQ(s.timeseries[1].running, 3);
  EXPECT_DOUBLE_EQ(s.timeseries[1].kv_usage, 0.5);

  std::istringstream lines(TimeseriesJsonl(s, recorder_.in_flight_series()));
  std::string first_line;
  ASSERT_TRUE(std::getline(lines, first_line));
  const boost::json::value v = boost::json::parse(first_line);
  EXPECT_EQ(v.at("offered").to_number<int>(), 2);
  EXPECT_EQ(v.at("in_flight").to_number<int>(), 0);
  EXPECT_TRUE(v.as_object().contains("shed"));
}

// The client cannot measure engine time: it is the server's counters (end minus start), and
// not measured ("n/a", null) when the server does not export one or was not scraped.
TEST_F(BenchRecorderTest, EngineTimeIsTheServersCountersElseNotMeasured) {
  FeedAll();
  ServerSnapshot first;
  first.engine_busy_s = 10;
  first.wasted_engine_s = 1;
  first.not_completed_engine_s = 2;
  ServerSnapshot last = first;
  last.engine_busy_s = 14.5;
  last.wasted_engine_s = 1;
  last.not_completed_engine_s = 8.25;
  recorder_.SetServerTotals(first, last);
  const RunSummary s = recorder_.Finish(10, 4.5);
  EXPECT_EQ(s.engine_busy_s, 4.5);
  EXPECT_EQ(s.wasted_engine_s, 0.0) << "measured: none wasted, which is not 'not measured'";
  EXPECT_EQ(s.not_completed_engine_s, 6.25);
}

TEST_F(BenchRecorderTest, PrefixCacheFiguresAreTheServersCountersEndMinusStart) {
  FeedAll();
  ServerSnapshot first;
  first.prefix_cache_queries = 1000;
  first.prefix_cache_hits = 64;
  ServerSnapshot last = first;
  last.prefix_cache_queries = 5000;
  last.prefix_cache_hits = 2064;
  recorder_.SetServerTotals(first, last);
  const RunSummary s = recorder_.Finish(10, 4.5);
  EXPECT_EQ(s.prefix_cache_queries_tokens, 4000);
  EXPECT_EQ(s.prefix_cache_hits_tokens, 2000);
}

TEST_F(BenchRecorderTest, EngineTimeAServerDoesNotExportIsNotMeasured) {
  FeedAll();
  ServerSnapshot first;  // a server with the busy and wasted counters only (no not-completed)
  first.engine_busy_s = 10;
  first.wasted_engine_s = 1;
  ServerSnapshot last = first;
  last.engine_busy_s = 12;
  recorder_.SetServerTotals(first, last);
  const RunSummary s = recorder_.Finish(10, 4.5);
  EXPECT_EQ(s.engine_busy_s, 2.0);
  EXPECT_EQ(s.wasted_engine_s, 0.0);
  EXPECT_FALSE(s.not_completed_engine_s.has_value());
}

TEST_F(BenchRecorderTest, EngineTimeWithoutScrapesIsNotMeasured) {
  FeedAll();  // --no-metrics, or a server without /metrics: no SetServerTotals
  const RunSummary s = recorder_.Finish(10, 4.5);
  EXPECT_FALSE(s.engine_busy_s.has_value());
  EXPECT_FALSE(s.wasted_engine_s.has_value());
  EXPECT_FALSE(s.not_completed_engine_s.has_value());
  // The failed request (the 504) counts against a latency objective in bench as in sim.
  EXPECT_EQ(s.e2e_objective_s.count, s.e2e_s.count + 1);
  EXPECT_TRUE(std::isinf(s.e2e_objective_s.max));
}

TEST_F(BenchRecorderTest, AttemptsCountUnderTheirScenarioClass) {
  using O = AttemptOutcome;
  AttemptRecord fast = Attempt(O::kCompleted, 0.0, 0.01, 0.2, 1.2, 11);
  fast.class_name = "interactive";
  AttemptRecord refused = Attempt(O::kRejected, 1.0, 1.01, kNever, 1.01, 0, 429, "rate_limited");
  refused.class_name = "batch";
  AttemptRecord retry = Attempt(O::kCompleted, 2.0, 2.01, 2.7, 3.7, 11);
  retry.class_name = "batch";
  retry.attempt = 2;
  AttemptRecord dropped =
      Attempt(O::kDroppedAtQueueHead, 3.0, 3.01, kNever, 3.9, 0, 200, "queue_deadline_exceeded");
  dropped.class_name = "batch";
  AttemptRecord trace = Attempt(O::kCompleted, 4.0, 4.01, 4.1, 4.5, 11);  // no class
  for (const AttemptRecord& r : {fast, refused, retry, dropped, trace}) {
    Feed(r);
  }
  const RunSummary s = recorder_.Finish(10, 4.5);
  ASSERT_EQ(s.classes.size(), 2u) << "a record without a class counts in no class";
  const ClassSummary& i = s.classes.at("interactive");
  EXPECT_EQ(i.offered, 1);
  EXPECT_EQ(i.completed, 1);
  EXPECT_NEAR(i.ttft_s.max, 0.2, 1e-12);
  const ClassSummary& b = s.classes.at("batch");
  EXPECT_EQ(b.offered, 3);
  EXPECT_EQ(b.admitted, 2);
  EXPECT_EQ(b.rejected, 1);
  EXPECT_EQ(b.dropped, 1);
  EXPECT_EQ(b.completed, 1);
  EXPECT_EQ(b.ttft_s.count, 1);
  EXPECT_NEAR(b.ttft_s.max, 0.7, 1e-12);
  EXPECT_EQ(s.offered, 5);
}

TEST_F(BenchRecorderTest, AnswersMarkedWithAClampCountAsDegraded) {
  using O = AttemptOutcome;
  AttemptRecord clamped = Attempt(O::kCompleted, 0.0, 0.01, 0.2, 1.2, 11);
  clamped.degraded = true;  // X-Degraded: max_tokens=N (serve's, or a gateway's cascade)
  Feed(clamped);
  Feed(Attempt(O::kCompleted, 0.5, 0.51, 0.7, 1.7, 11));
  const RunSummary s = recorder_.Finish(10, 4.5);
  EXPECT_EQ(s.admitted, 2);
  EXPECT_EQ(s.degraded, 1);
  EXPECT_TRUE(boost::json::parse(RecordJson(clamped)).at("degraded").as_bool());
}

TEST(QueueSpanTest, FromTheHeadToTheFirstTokenOrTheEndForAdmittedAttemptsOnly) {
  using O = AttemptOutcome;
  const std::optional<QueueSpan> served = QueueSpanOf(Attempt(O::kCompleted, 1, 1.01, 1.6, 3, 9));
  ASSERT_TRUE(served.has_value());
  EXPECT_DOUBLE_EQ(served->entered_s, 1.01);
  EXPECT_DOUBLE_EQ(served->left_s, 1.6);
  // Dropped at the queue head (inside the stream), abandoned before a token, a 504: the end.
  EXPECT_DOUBLE_EQ(QueueSpanOf(Attempt(O::kDroppedAtQueueHead, 2, 2.01, kNever, 2.9, 0))->left_s,
                   2.9);
  EXPECT_DOUBLE_EQ(QueueSpanOf(Attempt(O::kAbandoned, 2, 2.01, kNever, 4, 0))->left_s, 4);
  EXPECT_DOUBLE_EQ(QueueSpanOf(Attempt(O::kFailed, 3, 3.5, kNever, 3.5, 0, 504))->left_s, 3.5);
  // No head before the client gave up: a zero-length stay at its end.
  const std::optional<QueueSpan> headless =
      QueueSpanOf(Attempt(O::kAbandoned, 2, kNever, kNever, 4, 0, 0));
  ASSERT_TRUE(headless.has_value());
  EXPECT_DOUBLE_EQ(headless->entered_s, 4);
  EXPECT_DOUBLE_EQ(headless->left_s, 4);
  EXPECT_FALSE(QueueSpanOf(Attempt(O::kRejected, 1, 1.01, kNever, 1.01, 0, 429)).has_value());
  EXPECT_FALSE(QueueSpanOf(Attempt(O::kTransportError, 1, kNever, kNever, 1, 0, 0)).has_value());
}

TEST(QueueSpanTest, TheSummaryChecksEachRetryAfterAgainstTheEstimatedDrainTime) {
  using O = AttemptOutcome;
  BenchRecorder recorder(GoodputSlo{}, {{0, 10, 1.0}});
  const auto feed = [&recorder](const AttemptRecord& r) {
    recorder.OnAttemptStarted();
    recorder.OnAttemptDone(r);
  };
  feed(Attempt(O::kCompleted, 0.0, 0.01, 2.5, 4, 9));  // waiting [0.01, 2.5)
  feed(Attempt(O::kDroppedAtQueueHead, 0.5, 0.51, kNever, 3.8, 0, 200,
               "queue_deadline_exceeded"));  // waiting [0.51, 3.8); no Retry-After in a stream
  AttemptRecord refused =
      Attempt(O::kRejected, 1.0, 1.01, kNever, 1.02, 0, 429, "queue_delay_exceeded");
  refused.retry_after_s = 2;  // drain 3.8 - 1.01 = 2.79: short by 0.79
  feed(refused);
  refused.head_s = 1.2;
  refused.retry_after_s = 1;  // drain 2.6: short by 1.6
  feed(refused);
  refused.reason = "rate_limited";  // not checked
  feed(refused);
  const RunSummary s = recorder.Finish(10, 4);
  EXPECT_EQ(s.retry_after.checked, 2);
  EXPECT_EQ(s.retry_after.shortfalls, 1);
  EXPECT_NEAR(s.retry_after.max_shortfall_s, 1.6, 1e-12);
  EXPECT_NEAR(s.retry_after.max_drain_s, 2.79, 1e-12);
}

TEST(AttemptRecordTest, OneJsonLineWithNullTtftWhenNoTokenCame) {
  AttemptRecord r;
  r.request = 4;
  r.attempt = 2;
  r.sent_s = 1.0;
  r.finished_s = 1.25;
  r.status = 503;
  r.reason = "queue_full";
  r.outcome = AttemptOutcome::kRejected;
  const std::string line = RecordJson(r);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const boost::json::value v = boost::json::parse(line);
  EXPECT_TRUE(v.at("ttft_s").is_null());
  EXPECT_DOUBLE_EQ(v.at("e2e_s").to_number<double>(), 0.25);
  EXPECT_EQ(v.at("outcome").as_string(), "rejected");
  EXPECT_EQ(v.at("attempt").to_number<int>(), 2);
  EXPECT_EQ(v.at("reason").as_string(), "queue_full");
  EXPECT_TRUE(v.at("retry_after_s").is_null()) << "no Retry-After";
  r.retry_after_s = 3;
  EXPECT_DOUBLE_EQ(boost::json::parse(RecordJson(r)).at("retry_after_s").to_number<double>(), 3);
  EXPECT_TRUE(v.at("class").is_null()) << "a trace record has no class";
  EXPECT_TRUE(v.at("priority_requested").is_null());
  EXPECT_TRUE(v.at("priority_class").is_null());
}

TEST(AttemptRecordTest, ClassAndThePriorityAskedForAndApplied) {
  AttemptRecord r;
  r.class_name = "batch";
  r.priority_requested = 0;
  r.priority_class = 1;  // the server capped it at the key's class
  const boost::json::value v = boost::json::parse(RecordJson(r));
  EXPECT_EQ(v.at("class").as_string(), "batch");
  EXPECT_EQ(v.at("priority_requested").to_number<int>(), 0);
  EXPECT_EQ(v.at("priority_class").to_number<int>(), 1);
}

}  // namespace
}  // namespace spillway::loadgen
