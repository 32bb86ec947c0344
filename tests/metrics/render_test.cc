// Exact text exposition (format 0.0.4) for each metric type, labels and declaration order.

#include <string>

#include <gtest/gtest.h>

#include "metrics/metrics.h"

namespace spillway::metrics {
namespace {

TEST(RenderTest, UnlabelledCounterRendersZeroBeforeFirstUpdate) {
  Registry registry;
  registry.AddCounter("spillway_requests_total", "Requests offered.");
  EXPECT_EQ(registry.Render(),
            "# HELP spillway_requests_total Requests offered.\n"
            "# TYPE spillway_requests_total counter\n"
            "spillway_requests_total 0\n");
}

TEST(RenderTest, Counter) {
  Registry registry;
  Counter& c = registry.AddCounter("spillway_requests_total", "Requests offered.").Get();
  c.Inc();
  c.Inc(2.5);
  EXPECT_EQ(registry.Render(),
            "# HELP spillway_requests_total Requests offered.\n"
            "# TYPE spillway_requests_total counter\n"
            "spillway_requests_total 3.5\n");
}

TEST(RenderTest, ClearedSeriesLeaveTheExposition) {
  Registry registry;
  Family<Gauge>& f = registry.AddGauge("spillway_endpoint_up", "Up.", {"endpoint"});
  f.With({"a"}).Set(1);
  f.With({"b"}).Set(1);
  f.Clear();
  f.With({"b"}).Set(0);
  EXPECT_EQ(registry.Render(),
            "# HELP spillway_endpoint_up Up.\n"
            "# TYPE spillway_endpoint_up gauge\n"
            "spillway_endpoint_up{endpoint=\"b\"} 0\n");
}

TEST(RenderTest, Gauge) {
  Registry registry;
  Gauge& g = registry.AddGauge("vllm:num_requests_waiting", "Requests waiting.").Get();
  g.Set(45);
  g.Inc(3);
  g.Dec();
  EXPECT_EQ(registry.Render(),
            "# HELP vllm:num_requests_waiting Requests waiting.\n"
            "# TYPE vllm:num_requests_waiting gauge\n"
            "vllm:num_requests_waiting 47\n");
}

TEST(RenderTest, LabelledCounterWithTwoChildrenInCreationOrder) {
  Registry registry;
  Family<Counter>& rejected =
      registry.AddCounter("spillway_rejected_total", "Rejections.", {"status", "reason"});
  rejected.With({"503", "queue_full"}).Inc(2);
  rejected.With({"429", "rate_limited"}).Inc();
  rejected.With({"503", "queue_full"}).Inc();
  EXPECT_EQ(registry.Render(),
            "# HELP spillway_rejected_total Rejections.\n"
            "# TYPE spillway_rejected_total counter\n"
            "spillway_rejected_total{status=\"503\",reason=\"queue_full\"} 3\n"
            "spillway_rejected_total{status=\"429\",reason=\"rate_limited\"} 1\n");
}

TEST(RenderTest, LabelledFamilyWithoutChildrenRendersOnlyMetadata) {
  Registry registry;
  registry.AddGauge("spillway_tenant_tokens", "Tokens left.", {"tenant"});
  EXPECT_EQ(registry.Render(),
            "# HELP spillway_tenant_tokens Tokens left.\n"
            "# TYPE spillway_tenant_tokens gauge\n");
}

TEST(RenderTest, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  Registry registry;
  Histogram& h = registry.AddHistogram("spillway_ttft_seconds", "TTFT.", {0.125, 0.5, 1}).Get();
  h.Observe(0.0625);
  h.Observe(0.125);  // on a bound: counted in that bucket (le is inclusive)
  h.Observe(0.25);
  h.Observe(2);  // above every bound: only +Inf
  EXPECT_EQ(registry.Render(),
            "# HELP spillway_ttft_seconds TTFT.\n"
            "# TYPE spillway_ttft_seconds histogram\n"
            "spillway_ttft_seconds_bucket{le=\"0.125\"} 2\n"
            "spillway_ttft_seconds_bucket{le=\"0.5\"} 3\n"
            "spillway_ttft_seconds_bucket{le=\"1\"} 3\n"
            "spillway_ttft_seconds_bucket{le=\"+Inf\"} 4\n"
            "spillway_ttft_seconds_sum 2.4375\n"
            "spillway_ttft_seconds_count 4\n");
}

TEST(RenderTest, LabelledHistogramPutsLeAfterItsLabels) {
  Registry registry;
  Family<Histogram>& family =
      registry.AddHistogram("vllm:e2e_request_latency_seconds", "E2E.", {1}, {"model_name"});
  family.With({"m"}).Observe(0.5);
  EXPECT_EQ(registry.Render(),
            "# HELP vllm:e2e_request_latency_seconds E2E.\n"
            "# TYPE vllm:e2e_request_latency_seconds histogram\n"
            "vllm:e2e_request_latency_seconds_bucket{model_name=\"m\",le=\"1\"} 1\n"
            "vllm:e2e_request_latency_seconds_bucket{model_name=\"m\",le=\"+Inf\"} 1\n"
            "vllm:e2e_request_latency_seconds_sum{model_name=\"m\"} 0.5\n"
            "vllm:e2e_request_latency_seconds_count{model_name=\"m\"} 1\n");
}

TEST(RenderTest, FamiliesInDeclarationOrder) {
  Registry registry;
  registry.AddGauge("zeta", "Z.");
  registry.AddCounter("alpha_total", "A.");
  registry.AddHistogram("mid_seconds", "M.", {});
  EXPECT_EQ(registry.Render(),
            "# HELP zeta Z.\n"
            "# TYPE zeta gauge\n"
            "zeta 0\n"
            "# HELP alpha_total A.\n"
            "# TYPE alpha_total counter\n"
            "alpha_total 0\n"
            "# HELP mid_seconds M.\n"
            "# TYPE mid_seconds histogram\n"
            "mid_seconds_bucket{le=\"+Inf\"} 0\n"
            "mid_seconds_sum 0\n"
            "mid_seconds_count 0\n");
}

TEST(RenderTest, EmptyRegistryRendersNothing) { EXPECT_EQ(Registry().Render(), ""); }

}  // namespace
}  // namespace spillway::metrics
