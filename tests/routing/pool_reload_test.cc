// A pool changed by a config reload (routing::Pool::AddEndpoint, SetRemoved, Reconfigure): an
// endpoint removed gets no new work while its in-flight requests finish, and no probe brings
// it back; one added takes work at once; one added back takes work again with its counts
// intact; new settings apply to the next request while what the pool learned stays.

#include <algorithm>

#include <gtest/gtest.h>

#include "routing/pool.h"
#include "routing_test_util.h"

namespace spillway::routing {
namespace {

using routing_test::Priors;
// (router_test.cc, in the same unity batch, has a helper named Pool.)
using ReloadPool = ::spillway::routing::Pool;

/// `n` idle endpoints "e0".."e<n-1>", scraped at 0, routed round-robin (so every endpoint
/// that takes work is picked in turn).
ReloadPool IdleEndpoints(int n, RouterPolicy policy = RouterPolicy::kRoundRobin) {
  std::vector<EndpointState> states;
  for (int i = 0; i < n; ++i) {
    states.emplace_back("e" + std::to_string(i), true, Priors());
  }
  PoolConfig config;
  config.router.policy = policy;
  config.router.ttft_slo_s = 1.0;
  ReloadPool pool(std::move(states), config);
  for (std::size_t i = 0; i < pool.size(); ++i) {
    pool.OnScrape(i, {}, 0);
  }
  return pool;
}

/// The endpoints `count` requests routed at `now` went to.
std::vector<std::int32_t> RouteMany(ReloadPool& pool, int count, Seconds now) {
  std::vector<std::int32_t> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(pool.Route({.prompt_tokens = 100}, now).decision.endpoint);
  }
  return out;
}

TEST(PoolReloadTest, ARemovedEndpointGetsNoNewWorkAndItsInFlightRequestsFinish) {
  ReloadPool pool = IdleEndpoints(2);
  RouteMany(pool, 2, 0.1);  // one in flight on each
  ASSERT_EQ(pool.endpoint(1).in_flight(), 1);
  pool.SetRemoved(1, true, 0.2);
  EXPECT_TRUE(pool.removed(1));
  EXPECT_EQ(pool.HealthAt(1, 0.2), EndpointHealth::kDraining);
  EXPECT_EQ(RouteMany(pool, 4, 0.3), std::vector<std::int32_t>(4, 0));
  pool.OnProbe(1, ProbeResult::kReady, 0.4);
  EXPECT_EQ(pool.HealthAt(1, 0.4), EndpointHealth::kDraining) << "a ready probe does not undo it";
  pool.OnFinish(1, 0.5, true);
  EXPECT_EQ(pool.endpoint(1).in_flight(), 0) << "its request was counted to its end";
}

TEST(PoolReloadTest, WithEveryEndpointRemovedTheRouterSaysNoEndpoint) {
  ReloadPool pool = IdleEndpoints(2);
  pool.SetRemoved(0, true, 0);
  pool.SetRemoved(1, true, 0);
  const RouteDecision d = pool.Route({.prompt_tokens = 100}, 0.1).decision;
  EXPECT_FALSE(d.forwarded());
  EXPECT_EQ(d.reason, OverloadReason::kNoEndpoint);
}

TEST(PoolReloadTest, AnAddedEndpointTakesWorkAtOnce) {
  ReloadPool pool = IdleEndpoints(1);
  const std::size_t added = pool.AddEndpoint(EndpointState("e1", true, Priors()));
  EXPECT_EQ(added, 1u);
  EXPECT_EQ(pool.size(), 2u);
  EXPECT_EQ(pool.HealthAt(added, 0), EndpointHealth::kHealthy);
  const std::vector<std::int32_t> to = RouteMany(pool, 4, 0.1);
  EXPECT_EQ(std::count(to.begin(), to.end(), 1), 2) << "round-robin over both";
}

TEST(PoolReloadTest, AnEndpointAddedBackTakesWorkWithItsCountsKept) {
  ReloadPool pool = IdleEndpoints(2);
  RouteMany(pool, 2, 0.1);  // one in flight on each
  pool.SetRemoved(1, true, 0.2);
  pool.SetRemoved(1, false, 0.3);
  EXPECT_FALSE(pool.removed(1));
  EXPECT_EQ(pool.HealthAt(1, 0.3), EndpointHealth::kHealthy);
  EXPECT_EQ(pool.endpoint(1).in_flight(), 1) << "the request sent before is still counted";
  const std::vector<std::int32_t> to = RouteMany(pool, 2, 0.4);
  EXPECT_EQ(std::count(to.begin(), to.end(), 1), 1);
}

TEST(PoolReloadTest, NewSettingsApplyToTheNextRequestAndTheEndpointsStateStays) {
  ReloadPool pool = IdleEndpoints(1, RouterPolicy::kGateway);
  pool.OnScrape(0, {.num_waiting = 15, .num_running = 4}, 1.0);  // predicted about 1.6 s
  EXPECT_EQ(pool.Route({.prompt_tokens = 100}, 1.0).decision.verdict, Verdict::kShed)
      << "over the 1 s SLO";
  PoolConfig looser;
  looser.router.policy = RouterPolicy::kGateway;
  looser.router.ttft_slo_s = 3.0;
  pool.Reconfigure(looser);
  EXPECT_EQ(pool.router().config().ttft_slo_s, 3.0);
  EXPECT_EQ(pool.endpoint(0).load().num_waiting, 15) << "the last scrape is kept";
  EXPECT_TRUE(pool.Route({.prompt_tokens = 100}, 1.0).decision.forwarded());
}

TEST(PoolReloadTest, TheWaitQueueIsOnlyTheGatewayRoutersAfterAReloadToo) {
  ReloadPool pool = IdleEndpoints(1, RouterPolicy::kGateway);
  PoolConfig config;
  config.router.policy = RouterPolicy::kLeastRequests;
  config.queue.max_wait_s = 0.5;
  pool.Reconfigure(config);
  pool.OnScrape(0, {.num_waiting = 100, .num_running = 4}, 1.0);
  EXPECT_EQ(pool.Admit(1, {.prompt_tokens = 100}, 1.0).kind, ReloadPool::Placement::Kind::kRouted);
  EXPECT_EQ(pool.waiting(), 0u);
}

}  // namespace
}  // namespace spillway::routing
