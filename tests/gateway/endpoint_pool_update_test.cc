// The live gateway's EndpointPool across config reloads (Update, Retire), without the network:
// an endpoint is known by host, port and base path whatever the spelling of its URL; a changed
// kind or address restarts its loops; and a pool whose model a reload removed lets those waiting
// in its queue go first, its endpoints removed only once none waits.

#include <boost/asio/io_context.hpp>
#include <memory>

#include <gtest/gtest.h>

#include "gateway/endpoint_pool.h"
#include "metrics/prometheus_text.h"
#include "net/target.h"

namespace spillway::gateway {
namespace {

Upstream VllmAt(const std::string& url,
                std::optional<routing::EngineKind> kind = routing::EngineKind::kVllm) {
  Upstream up;
  up.url = url;
  up.target = net::ParseTarget(url);
  up.kind = kind;
  up.addresses = {{boost::asio::ip::make_address("127.0.0.1"), 1}};
  return up;
}

/// vLLM's exposition with `waiting` queued and a full batch of 16.
metrics::Exposition Load(int waiting) {
  return metrics::ParseExposition("vllm:num_requests_waiting " + std::to_string(waiting) +
                                  "\nvllm:num_requests_running 16\nvllm:kv_cache_usage_perc 0.5\n");
}

GatewayConfig QueueOn() {
  GatewayConfig c;
  c.router.ttft_slo_s = 1.0;
  c.queue.max_wait_s = 0.5;
  return c;
}

TEST(EndpointPoolUpdateTest, AnEndpointSpeltAnotherWayIsTheSameEndpoint) {
  EndpointPool pool("m", {VllmAt("http://127.0.0.1:1")}, QueueOn());
  const EndpointPool::Changes c = pool.Update({VllmAt("http://127.0.0.1:1/v1/")}, QueueOn(), 0);
  EXPECT_EQ(c.added + c.removed + c.changed, 0u);
  EXPECT_TRUE(c.started.empty());
  EXPECT_TRUE(pool.Watched(0, 1)) << "its loops go on";
  EXPECT_EQ(pool.upstream(0)->url, "http://127.0.0.1:1") << "the spelling it had";
}

TEST(EndpointPoolUpdateTest, NewPriorsApplyWithoutRestartingTheEndpoint) {
  EndpointPool pool("m", {VllmAt("http://127.0.0.1:1", routing::EngineKind::kOpenai)}, QueueOn());
  Upstream bigger = VllmAt("http://127.0.0.1:1", routing::EngineKind::kOpenai);
  bigger.priors.max_running = 256;
  const EndpointPool::Changes c = pool.Update({bigger}, QueueOn(), 0);
  EXPECT_EQ(c.added + c.removed + c.changed, 0u);
  EXPECT_TRUE(pool.Watched(0, 1)) << "its loops and connections go on";
  EXPECT_EQ(pool.Endpoint(0).MaxRunning(), 256) << "an endpoint without metrics takes it at once";
}

TEST(EndpointPoolUpdateTest, AChangedKindRestartsTheEndpointsLoops) {
  EndpointPool pool("m", {VllmAt("http://127.0.0.1:1")}, QueueOn());
  const EndpointPool::Changes c =
      pool.Update({VllmAt("http://127.0.0.1:1", routing::EngineKind::kSglang)}, QueueOn(), 0);
  EXPECT_EQ(c.changed, 1u);
  ASSERT_EQ(c.started.size(), 1u);
  EXPECT_EQ(c.started[0].generation, 2u);
  EXPECT_FALSE(pool.Watched(0, 1)) << "the old loops end";
  EXPECT_TRUE(pool.Watched(0, 2));
  EXPECT_EQ(pool.Kind(0), routing::EngineKind::kSglang);
  EXPECT_EQ(pool.active(), 1u);
}

TEST(EndpointPoolUpdateTest, ARetiredPoolLetsThoseWaitingGoFirst) {
  boost::asio::io_context ioc;
  EndpointPool pool("m", {VllmAt("http://127.0.0.1:1")}, QueueOn());
  ASSERT_TRUE(pool.OnScrape(0, Load(30), 0.0));  // about 3 s ahead: over the 1 s SLO
  auto waiter = std::make_shared<Waiter>(ioc.get_executor());
  const routing::Pool::Placement p = pool.Admit(1, {.prompt_tokens = 100}, 0.0, waiter);
  ASSERT_EQ(p.kind, routing::Pool::Placement::Kind::kQueued);

  pool.Retire(0.01);
  EXPECT_TRUE(pool.Watched(0, 1)) << "kept (and scraped) while a request waits";
  ASSERT_TRUE(pool.OnScrape(0, Load(0), 0.1));  // a slot: it goes
  ASSERT_TRUE(waiter->placement.has_value());
  EXPECT_TRUE(waiter->placement->pick.decision.forwarded());
  EXPECT_EQ(pool.waiting(), 0u);
  EXPECT_FALSE(pool.Watched(0, pool.generation(0))) << "nobody waits: its endpoints leave";
  EXPECT_EQ(pool.active(), 0u);
}

TEST(EndpointPoolUpdateTest, ARetiredPoolWithNobodyWaitingRemovesItsEndpointsAtOnce) {
  EndpointPool pool("m", {VllmAt("http://127.0.0.1:1"), VllmAt("http://127.0.0.1:2")}, QueueOn());
  pool.Retire(0);
  EXPECT_EQ(pool.active(), 0u);
}

}  // namespace
}  // namespace spillway::gateway
