// Each engine kind's /metrics, read from payloads taken from the projects' own documentation or
// sources (tests/routing/fixtures/, each file names its source).
#include "routing/engine_metrics.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace spillway::routing {
namespace {

metrics::Exposition Fixture(const std::string& name) {
  std::ifstream in(std::string(SPILLWAY_SOURCE_DIR) + "/tests/routing/fixtures/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream text;
  text << in.rdbuf();
  return metrics::ParseExposition(text.str());
}

struct KindCase {
  const char* file;
  EngineKind kind;
  std::int32_t waiting;
  std::int32_t running;
  double kv_usage;
};

class EngineFixtureTest : public ::testing::TestWithParam<KindCase> {};

TEST_P(EngineFixtureTest, DetectsTheKindAndReadsItsLoad) {
  const KindCase& c = GetParam();
  const metrics::Exposition e = Fixture(c.file);
  EXPECT_EQ(e.malformed_lines, 0) << c.file;
  ASSERT_EQ(DetectEngineKind(e), c.kind) << c.file;
  const std::optional<EndpointLoad> load = LoadFromMetrics(c.kind, e);
  ASSERT_TRUE(load.has_value()) << c.file;
  EXPECT_EQ(load->num_waiting, c.waiting) << c.file;
  EXPECT_EQ(load->num_running, c.running) << c.file;
  EXPECT_DOUBLE_EQ(load->kv_usage, c.kv_usage) << c.file;
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, EngineFixtureTest,
    ::testing::Values(KindCase{"vllm_v1.prom", EngineKind::kVllm, 3, 8, 0.4212598425196851},
                      // V0 exports gpu_cache_usage_perc only: the fallback name.
                      KindCase{"vllm_v0.prom", EngineKind::kVllm, 5, 12, 0.8703125},
                      KindCase{"sglang.prom", EngineKind::kSglang, 2826, 162, 0.28},
                      // TGI exports no KV usage.
                      KindCase{"tgi.prom", EngineKind::kTgi, 4, 7, 0.0},
                      KindCase{"llamacpp.prom", EngineKind::kLlamacpp, 1, 2, 0.34375}));

TEST(EngineMetricsTest, KindNamesRoundTrip) {
  for (const EngineKind k : {EngineKind::kVllm, EngineKind::kSglang, EngineKind::kTgi,
                             EngineKind::kLlamacpp, EngineKind::kSpillway, EngineKind::kOpenai}) {
    EngineKind parsed{};
    ASSERT_TRUE(ParseEngineKind(ToString(k), &parsed)) << ToString(k);
    EXPECT_EQ(parsed, k);
  }
  EngineKind ignored{};
  EXPECT_FALSE(ParseEngineKind("vLLM", &ignored));
  EXPECT_FALSE(ExportsMetrics(EngineKind::kOpenai));
  EXPECT_TRUE(ExportsMetrics(EngineKind::kTgi));
}

TEST(EngineMetricsTest, AScrapeWithoutTheLoadSeriesIsNotALoad) {
  const metrics::Exposition e = metrics::ParseExposition("vllm:num_requests_running 3\n");
  EXPECT_FALSE(LoadFromMetrics(EngineKind::kVllm, e).has_value()) << "no waiting series";
  EXPECT_FALSE(LoadFromMetrics(EngineKind::kOpenai, e).has_value());
  EXPECT_FALSE(DetectEngineKind(metrics::ParseExposition("go_goroutines 12\n")).has_value());
}

TEST(EngineMetricsTest, OddValuesAreReadSafely) {
  const metrics::Exposition e = metrics::ParseExposition(
      "vllm:num_requests_waiting NaN\nvllm:num_requests_running -3\n"
      "vllm:kv_cache_usage_perc 1.7\n");
  const std::optional<EndpointLoad> load = LoadFromMetrics(EngineKind::kVllm, e);
  ASSERT_TRUE(load.has_value());
  EXPECT_EQ(load->num_waiting, 0);
  EXPECT_EQ(load->num_running, 0);
  EXPECT_EQ(load->kv_usage, 1.0);
}

TEST(EngineMetricsTest, SpillwayIsToldFromVllmByItsOwnSeries) {
  const metrics::Exposition e = metrics::ParseExposition(
      "vllm:num_requests_waiting 1\nvllm:num_requests_running 2\nspillway_draining 0\n");
  EXPECT_EQ(DetectEngineKind(e), EngineKind::kSpillway);
}

TEST(EngineMetricsTest, ASpillwayEnginesForecastIsReadWhenItForecasts) {
  const std::string load = "vllm:num_requests_waiting 1\nvllm:num_requests_running 2\n";
  const auto forecast = [&](const std::string& value) {
    return LoadFromMetrics(EngineKind::kSpillway,
                           metrics::ParseExposition(load + "spillway_ttft_forecast_queue_seconds " +
                                                    value + "\n"))
        ->queue_forecast_s;
  };
  EXPECT_DOUBLE_EQ(forecast("0.35"), 0.35);
  EXPECT_LT(forecast("-1"), 0) << "the engine does not forecast (another policy)";
  EXPECT_LT(forecast("NaN"), 0);
  EXPECT_LT(
      LoadFromMetrics(EngineKind::kSpillway, metrics::ParseExposition(load))->queue_forecast_s, 0)
      << "an older Spillway without the series";
  EXPECT_LT(LoadFromMetrics(
                EngineKind::kVllm,
                metrics::ParseExposition(load + "spillway_ttft_forecast_queue_seconds 0.35\n"))
                ->queue_forecast_s,
            0)
      << "read for the spillway kind only";
}

TEST(EngineMetricsTest, PrefixCachingIsReadFromVllmsCacheConfigInfo) {
  const std::string load = "vllm:num_requests_waiting 1\nvllm:num_requests_running 2\n";
  const auto caching = [&](EngineKind kind, const std::string& more) {
    return LoadFromMetrics(kind, metrics::ParseExposition(load + more))->prefix_caching;
  };
  // vLLM's own exposition: the cache config's fields as labels, Python's True/False.
  const std::string on =
      "vllm:cache_config_info{block_size=\"16\",enable_prefix_caching=\"True\","
      "num_gpu_blocks=\"25720\"} 1.0\n";
  const std::string off =
      "vllm:cache_config_info{block_size=\"16\",enable_prefix_caching=\"False\"} 1.0\n";
  EXPECT_TRUE(caching(EngineKind::kVllm, on));
  EXPECT_TRUE(caching(EngineKind::kSpillway, on));
  EXPECT_FALSE(caching(EngineKind::kVllm, off));
  EXPECT_FALSE(caching(EngineKind::kVllm, "")) << "not said: not counted on";
  const std::string sglang = "sglang:num_queue_reqs 1\nsglang:num_running_reqs 2\n";
  EXPECT_TRUE(
      LoadFromMetrics(EngineKind::kSglang, metrics::ParseExposition(sglang))->prefix_caching)
      << "its radix cache is on by default";
  const std::string tgi = "tgi_queue_size 1\ntgi_batch_current_size 2\n";
  EXPECT_FALSE(LoadFromMetrics(EngineKind::kTgi, metrics::ParseExposition(tgi))->prefix_caching);
}

}  // namespace
}  // namespace spillway::routing
