// `spillway serve`'s own /metrics (rendered by its real ServerMetrics) read as the gateway
// reads it: detected as kind spillway, its vLLM-named load series mapped.
#include <gtest/gtest.h>

#include "metrics/prometheus_text.h"
#include "routing/engine_metrics.h"
#include "server/server_metrics.h"

namespace spillway::gateway {
namespace {

TEST(SpillwayScrapeTest, ServesOwnMetricsAreDetectedAndRead) {
  server::ServerMetrics m("spillway-emulated");
  m.num_requests_waiting->Set(6);
  m.num_requests_running->Set(27);
  m.kv_cache_usage_perc->Set(0.25);
  const metrics::Exposition e = metrics::ParseExposition(m.Render());
  EXPECT_EQ(e.malformed_lines, 0);
  ASSERT_EQ(routing::DetectEngineKind(e), routing::EngineKind::kSpillway);
  const auto load = routing::LoadFromMetrics(routing::EngineKind::kSpillway, e);
  ASSERT_TRUE(load.has_value());
  EXPECT_EQ(load->num_waiting, 6);
  EXPECT_EQ(load->num_running, 27);
  EXPECT_EQ(load->kv_usage, 0.25);
}

}  // namespace
}  // namespace spillway::gateway
