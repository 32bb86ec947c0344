// Client behaviour in the simulator: retries after rejections and timeouts, the retry budget,
// requests longer than the context, and scenario-level switches.

#include <gtest/gtest.h>

#include <fstream>

#include "report/objectives.h"
#include "sim/capacity.h"
#include "sim_fixture.h"

namespace spillway {
namespace {

using simtest::RepoPath;
using simtest::RunSim;

Scenario Burst() { return LoadScenario(RepoPath("scenarios/seed-burst.yaml")); }

TEST(RetryTest, FixedShortRetriesAmplifyLoadMoreThanBackoffWithJitter) {
  Scenario fixed = Burst();
  fixed.client.retry = RetryPolicy::kFixed;
  fixed.client.retry_interval_s = 0.1;  // the lesson's "BAD" client: 100 ms, no jitter
  fixed.client.max_attempts = 20;
  Scenario backoff = Burst();
  backoff.client.retry = RetryPolicy::kBackoffJitter;
  backoff.client.max_attempts = 3;
  backoff.client.retry_budget = 0.2;
  const RunSummary f = RunSim(fixed, AdmissionPolicy::kPredictive);
  const RunSummary b = RunSim(backoff, AdmissionPolicy::kPredictive);
  EXPECT_EQ(f.first_attempts, b.first_attempts);
  EXPECT_GT(f.offered, 2 * f.first_attempts);    // the storm
  EXPECT_LT(b.offered, 1.5 * b.first_attempts);  // bounded by the budget
  EXPECT_LE(b.retries, static_cast<std::int64_t>(0.2 * b.first_attempts) + 1);
}

TEST(RetryTest, TimeoutsAreRetriedOnlyWhenAsked) {
  Scenario sc = Burst();
  sc.client.retry = RetryPolicy::kFixed;
  sc.client.max_attempts = 2;
  const RunSummary without = RunSim(sc, AdmissionPolicy::kUnbounded);
  EXPECT_EQ(without.retries, 0);  // unbounded never rejects; abandonment is not retried
  sc.client.retry_on_timeout = true;
  const RunSummary with = RunSim(sc, AdmissionPolicy::kUnbounded);
  EXPECT_GT(with.retries, 0);
  EXPECT_LE(with.retries, with.abandoned_after_admission);
}

TEST(ContextLengthTest, RequestsLongerThanTheContextAreRefusedWith400) {
  Scenario sc = Burst();
  sc.classes[2].prompt_tokens.value = 5000;  // > max_model_len 4096 of seed-a100-7b
  sc.client.retry = RetryPolicy::kFixed;
  sc.client.max_attempts = 3;
  const RunSummary s = RunSim(sc, AdmissionPolicy::kUnbounded);
  ASSERT_GT(s.rejected_by_status.count("400"), 0u);
  EXPECT_EQ(s.rejected_by_reason.at("context_length_exceeded"), s.rejected_by_status.at("400"));
  EXPECT_EQ(s.retries, 0);  // a 400 is not retried
}

// The case a new user found live: with 100 KV blocks (1,600 tokens) a 2,000-token prompt fits
// max_model_len but not the pool. It is refused at the door with 400 kv_capacity_exceeded,
// never retried (the contract says no retry helps), and costs no engine time.
TEST(KvCapacityTest, ARequestLargerThanTheWholePoolIsA400AtTheDoorAndNotRetried) {
  Scenario sc = Burst();
  sc.settings.num_gpu_blocks = 100;
  sc.classes[2].prompt_tokens.value = 2000;
  sc.client.retry = RetryPolicy::kFixed;
  sc.client.max_attempts = 3;
  const RunSummary s = RunSim(sc, AdmissionPolicy::kUnbounded);
  ASSERT_GT(s.rejected_by_reason.count("kv_capacity_exceeded"), 0u);
  EXPECT_EQ(s.rejected_by_reason.at("kv_capacity_exceeded"), s.rejected_by_status.at("400"));
  EXPECT_EQ(s.retries, 0);
  EXPECT_EQ(s.rejected_by_reason.count("rejected"), 0u);
}

TEST(QueueDeadlineTest, CanBeTurnedOffUnderPredictive) {
  Scenario sc = Burst();
  EXPECT_GT(RunSim(sc, AdmissionPolicy::kPredictive).dropped_at_queue_head, 0);
  sc.settings.queue_deadline = false;
  EXPECT_EQ(RunSim(sc, AdmissionPolicy::kPredictive).dropped_at_queue_head, 0);
}

TEST(ObjectivesTest, APercentileOfNoSamplesFails) {
  RunSummary s;  // nothing completed
  Objectives o;
  o.e2e_p99_s = 5.0;
  EvaluateObjectives(o, &s);
  ASSERT_EQ(s.objectives.size(), 1u);
  EXPECT_FALSE(s.objectives[0].pass);
}

TEST(CapacityTest, TraceScenarioIsMeasuredOnTheTraceItself) {
  const std::string trace =
      std::string(SPILLWAY_SHARED_DIR) + "/traces/AzureLLMInferenceTrace_conv.csv";
  if (!std::ifstream(trace)) {
    GTEST_SKIP() << "no trace at " << trace;
  }
  const Scenario sc = LoadScenario(RepoPath("scenarios/azure-conv.yaml"));
  CapacityOptions opt;
  opt.tolerance_rps = 1.0;
  const CapacityResult r =
      MeasureCapacity(sc, simtest::Resolve(sc, AdmissionPolicy::kUnbounded), opt);
  EXPECT_FALSE(r.at_search_ceiling);
  EXPECT_GT(r.mu_rps, 5.0);  // the trace's own rate (5 req/s) fits on an H100
  for (const CapacityProbe& p : r.probes) {
    EXPECT_GT(p.tpot_p95_s, 0.0);  // real token counts, not empty requests
  }
}

}  // namespace
}  // namespace spillway
