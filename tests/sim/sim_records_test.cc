// The simulator's per-attempt records (SimOptions::on_record, `spillway sim --records`): one
// record per attempt in the load generator's schema, each outcome counted as the summary
// counts it, attempts of a request numbered in order, and the forecast the policy admitted on.

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <map>
#include <vector>

#include "sim_fixture.h"

namespace spillway {
namespace {

using simtest::RepoPath;
using simtest::Resolve;

struct Recorded {
  RunSummary summary;
  std::vector<AttemptRecord> records;
};

Recorded RunRecorded(const Scenario& sc, AdmissionPolicy policy, SimOptions opt = {}) {
  Recorded out;
  opt.on_record = [&out](const AttemptRecord& r) { out.records.push_back(r); };
  out.summary = Simulate(sc, Resolve(sc, policy), opt);
  return out;
}

std::map<AttemptOutcome, std::int64_t> CountOutcomes(const std::vector<AttemptRecord>& records) {
  std::map<AttemptOutcome, std::int64_t> n;
  for (const AttemptRecord& r : records) {
    ++n[r.outcome];
  }
  return n;
}

void ExpectCountsMatch(const Recorded& run) {
  const RunSummary& s = run.summary;
  std::map<AttemptOutcome, std::int64_t> n = CountOutcomes(run.records);
  EXPECT_EQ(static_cast<std::int64_t>(run.records.size()), s.offered);
  EXPECT_EQ(n[AttemptOutcome::kRejected], s.rejected_total);
  EXPECT_EQ(n[AttemptOutcome::kDroppedAtQueueHead], s.dropped_at_queue_head);
  EXPECT_EQ(n[AttemptOutcome::kCompleted], s.completed);
  EXPECT_EQ(n[AttemptOutcome::kFailed], s.failed);
  EXPECT_EQ(n[AttemptOutcome::kAbandoned], s.abandoned_after_admission);
  EXPECT_EQ(n[AttemptOutcome::kTransportError], 0);
}

// Every request's attempts are numbered 1, 2, ... in the order they were sent.
void ExpectAttemptsInOrder(const std::vector<AttemptRecord>& records) {
  std::map<std::int64_t, std::vector<const AttemptRecord*>> by_request;
  for (const AttemptRecord& r : records) {
    by_request[r.request].push_back(&r);
  }
  for (auto& [request, attempts] : by_request) {
    std::sort(attempts.begin(), attempts.end(), [](const AttemptRecord* a, const AttemptRecord* b) {
      return a->attempt < b->attempt;
    });
    for (std::size_t i = 0; i < attempts.size(); ++i) {
      ASSERT_EQ(attempts[i]->attempt, static_cast<std::int32_t>(i + 1)) << "request " << request;
      ASSERT_LE(attempts[i]->sent_s, attempts[i]->finished_s);
      if (i > 0) {
        ASSERT_GE(attempts[i]->sent_s, attempts[i - 1]->finished_s) << "request " << request;
      }
    }
  }
}

TEST(SimRecordsTest, ARetryStormHasOneRecordPerAttemptCountedAsTheSummaryCounts) {
  const Scenario sc = LoadScenario(RepoPath("scenarios/failure/retry-storm-fixed.yaml"));
  const Recorded run = RunRecorded(sc, AdmissionPolicy::kPredictive);
  ASSERT_GT(run.summary.retries, 0);
  ExpectCountsMatch(run);
  ExpectAttemptsInOrder(run.records);
  std::int64_t retries = 0;
  for (const AttemptRecord& r : run.records) {
    retries += r.attempt > 1 ? 1 : 0;
    if (r.outcome == AttemptOutcome::kRejected) {
      EXPECT_NE(r.status, 200);
      EXPECT_FALSE(r.priority_class.has_value()) << "a refusal echoes no class";
    } else {
      EXPECT_EQ(r.status, 200) << "every request streams: its head went out at admission";
    }
    EXPECT_EQ(r.ttft_forecast_s, kNever) << "predictive forecasts nothing";
  }
  EXPECT_EQ(retries, run.summary.retries);
}

TEST(SimRecordsTest, UnderForecastEveryAdmittedAttemptCarriesItsForecast) {
  const Scenario sc = LoadScenario(RepoPath("scenarios/seed-burst-eos-varied.yaml"));
  const Recorded run = RunRecorded(sc, AdmissionPolicy::kForecast);
  ExpectCountsMatch(run);
  std::int64_t within = 0;
  std::int64_t completed = 0;
  for (const AttemptRecord& r : run.records) {
    if (r.outcome == AttemptOutcome::kRejected) {
      EXPECT_EQ(r.ttft_forecast_s, kNever);
      continue;
    }
    ASSERT_NE(r.ttft_forecast_s, kNever);
    EXPECT_LE(r.ttft_forecast_s, sc.slo.ttft_s.value()) << "admitted only within the SLO";
    EXPECT_GT(r.emulated_output_tokens, 0) << "the hidden length is recorded";
    if (r.outcome == AttemptOutcome::kCompleted) {
      ++completed;
      EXPECT_LE(r.output_tokens, r.max_tokens);
      within += std::abs((r.first_token_s - r.sent_s) - r.ttft_forecast_s) < 0.25 ? 1 : 0;
    }
  }
  // The summary's error (p95 0.24 s on this scenario) is these records' error.
  EXPECT_GE(within, completed * 9 / 10);
}

TEST(SimRecordsTest, BehindTheGatewayAKilledEnginesStreamsBreakAndEachLineIsJson) {
  Scenario sc = LoadScenario(RepoPath("scenarios/fleet/kill-and-drain-short.yaml"));
  SimOptions opt;
  opt.replicas = sc.fleet.replicas;
  opt.faults = sc.fleet.faults;
  opt.gateway = SimGateway{};
  const Recorded run = RunRecorded(sc, AdmissionPolicy::kPredictive, opt);
  ExpectCountsMatch(run);
  ExpectAttemptsInOrder(run.records);
  std::int64_t broken = 0;
  for (const AttemptRecord& r : run.records) {
    broken += r.reason == "stream_broken" ? 1 : 0;
    const boost::json::object o =
        boost::json::parse(RecordJson(r, "predictive@gateway")).as_object();
    EXPECT_EQ(o.at("run").as_string(), "predictive@gateway");
    EXPECT_EQ(o.at("outcome").as_string(), ToString(r.outcome));
  }
  EXPECT_GE(broken, 1) << "the kill breaks the streams of what the engine was running";
  for (const AttemptRecord& r : run.records) {
    if (r.outcome == AttemptOutcome::kFailed) {
      EXPECT_TRUE(r.reason == "stream_broken" || r.reason == "request_timeout" ||
                  r.reason == "preemption_limit")
          << r.reason;
    }
  }
}

}  // namespace
}  // namespace spillway
