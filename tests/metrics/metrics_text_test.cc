// Prometheus text lookups (metrics/metrics_text.h).

#include "metrics/metrics_text.h"

#include <gtest/gtest.h>

#include <cmath>

namespace spillway::metrics {
namespace {

constexpr const char* kExposition =
    "# HELP vllm:num_requests_waiting Requests waiting to be scheduled.\n"
    "# TYPE vllm:num_requests_waiting gauge\n"
    "vllm:num_requests_waiting{model_name=\"a\"} 3\n"
    "vllm:num_requests_waiting{model_name=\"b}\\\"x\"} 4 1700000000000\n"
    "vllm:num_requests_waiting_total 100\n"
    "vllm:kv_cache_usage_perc{model_name=\"a\"} 0.25\r\n"
    "vllm:kv_cache_usage_perc{model_name=\"b\"} 0.75\n"
    "spillway_wasted_engine_seconds_total 1.5e+01\n"
    "spillway_engine_busy_seconds_total +Inf\n"
    "vllm:num_preemptions_total{model_name=\"a\"} not-a-number\n";

TEST(MetricsTextTest, SumsEverySeriesOfTheNameAndNothingElse) {
  EXPECT_EQ(SampleSum(kExposition, "vllm:num_requests_waiting"), 7.0);
  EXPECT_EQ(SampleSum(kExposition, "vllm:num_requests_waiting_total"), 100.0);
  EXPECT_EQ(SampleSum(kExposition, "spillway_wasted_engine_seconds_total"), 15.0);
  EXPECT_EQ(SampleMean(kExposition, "vllm:kv_cache_usage_perc"), 0.5);
  EXPECT_TRUE(std::isinf(*SampleSum(kExposition, "spillway_engine_busy_seconds_total")));
}

TEST(MetricsTextTest, AbsentOrMalformedIsNullopt) {
  EXPECT_FALSE(SampleSum(kExposition, "vllm:num_requests_running").has_value());
  EXPECT_FALSE(SampleSum(kExposition, "vllm:num_preemptions_total").has_value());
  EXPECT_FALSE(SampleSum("", "x").has_value());
  EXPECT_FALSE(SampleSum("# x 1\n", "x").has_value());
}

TEST(MetricsTextTest, SnapshotReadsTheRecomputedTokens) {
  const ServerSnapshot s = ReadServerSnapshot(
      "vllm:prompt_tokens_total{model_name=\"m\"} 900\n"
      "spillway_recomputed_prefill_tokens_total 120\n");
  EXPECT_EQ(s.prompt_tokens, 900.0);
  EXPECT_EQ(s.recomputed_tokens, 120.0);
  EXPECT_FALSE(ReadServerSnapshot("vllm:prompt_tokens_total 1\n").recomputed_tokens.has_value());
}

TEST(MetricsTextTest, SnapshotReadsThePrefixCacheCountersInTokens) {
  const ServerSnapshot s = ReadServerSnapshot(
      "vllm:prefix_cache_queries_total{engine=\"0\",model_name=\"m\"} 1588299\n"
      "vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 25344\n");
  EXPECT_EQ(s.prefix_cache_queries, 1588299);
  EXPECT_EQ(s.prefix_cache_hits, 25344);
  EXPECT_FALSE(ReadServerSnapshot("vllm:prompt_tokens_total 1\n").prefix_cache_hits.has_value());
}

TEST(MetricsTextTest, SnapshotReadsTheEngineTimeCounters) {
  const ServerSnapshot s = ReadServerSnapshot(
      "# TYPE spillway_engine_busy_seconds_total counter\n"
      "spillway_engine_busy_seconds_total 61.75\n"
      "spillway_wasted_engine_seconds_total 0.5\n"
      "spillway_not_completed_engine_seconds_total 6.25\n");
  EXPECT_EQ(s.engine_busy_s, 61.75);
  EXPECT_EQ(s.wasted_engine_s, 0.5);
  EXPECT_EQ(s.not_completed_engine_s, 6.25);
  EXPECT_FALSE(ReadServerSnapshot("spillway_wasted_engine_seconds_total 0.5\n")
                   .not_completed_engine_s.has_value());
}

TEST(MetricsTextTest, SnapshotFallsBackToTheOlderKvGaugeName) {
  const ServerSnapshot s =
      ReadServerSnapshot("vllm:gpu_cache_usage_perc 0.4\nvllm:num_requests_running 2\n");
  EXPECT_EQ(s.kv_usage, 0.4);
  EXPECT_EQ(s.running, 2.0);
  EXPECT_FALSE(s.waiting.has_value());
  EXPECT_FALSE(s.wasted_engine_s.has_value());
}

TEST(MetricsTextTest, SnapshotsOfSeveralServersSumAndKvUsageIsTheirMean) {
  const ServerSnapshot a = ReadServerSnapshot(
      "vllm:num_requests_waiting 3\nvllm:kv_cache_usage_perc 0.2\n"
      "vllm:num_preemptions_total 4\nspillway_engine_busy_seconds_total 10\n");
  const ServerSnapshot b = ReadServerSnapshot(
      "vllm:num_requests_waiting 5\nvllm:kv_cache_usage_perc 0.6\n"
      "vllm:num_preemptions_total 1\nspillway_engine_busy_seconds_total 2.5\n"
      "spillway_wasted_engine_seconds_total 0.5\n");
  ServerSnapshot gone = a;  // a server that no longer answers: counters kept, gauges unknown
  gone.waiting.reset();
  gone.kv_usage.reset();
  const ServerSnapshot s = SumSnapshots({a, b, gone});
  EXPECT_EQ(s.waiting, 8.0);
  EXPECT_DOUBLE_EQ(*s.kv_usage, 0.4);
  EXPECT_EQ(s.preemptions, 9.0);
  EXPECT_EQ(s.engine_busy_s, 22.5);
  EXPECT_EQ(s.wasted_engine_s, 0.5);    // only one part has it
  EXPECT_FALSE(s.running.has_value());  // no part has it
  EXPECT_FALSE(SumSnapshots({}).waiting.has_value());
}

}  // namespace
}  // namespace spillway::metrics
