// Prefix-aware routing in the simulator: the Mooncake trace at three times its rate on three
// long-context engines with prefix caching (scenarios/fleet/mooncake-x3.yaml), behind the
// gateway with prefix-aware routing on and off, in the same test (round-robin's figures, in
// docs/prefix-caching.md, come from `spillway sim --router gateway,round-robin,llm-d`).

#include <gtest/gtest.h>

#include <optional>

#include "sim_fixture.h"

namespace spillway {
namespace {

using simtest::RepoPath;
using simtest::Resolve;

double PrefixHitRate(const RunSummary& s) {
  return s.prefix_cache_queries_tokens > 0 ? static_cast<double>(s.prefix_cache_hits_tokens) /
                                                 static_cast<double>(s.prefix_cache_queries_tokens)
                                           : 0.0;
}

/// The scenario's three replicas behind `router`, admitting against its TTFT SLO as `spillway
/// sim` tells the gateway to, with prefix-aware routing `prefix_aware`.
RunSummary RunBehind(const Scenario& sc, routing::RouterPolicy router, bool prefix_aware) {
  SimOptions opt;
  opt.replicas = sc.fleet.replicas;
  opt.invariant_checks = InvariantChecks::kAmortized;
  opt.gateway = SimGateway{};
  opt.gateway->router.policy = router;
  opt.gateway->router.ttft_slo_s = sc.slo.ttft_s.value_or(opt.gateway->router.ttft_slo_s);
  opt.gateway->router.prefix.enabled = prefix_aware;
  return Simulate(sc, Resolve(sc, AdmissionPolicy::kForecast), opt);
}

TEST(PrefixRoutingSimTest, TheGatewaySendsPrefixesWhereTheyAreCachedForMoreHitsAndGoodput) {
#if defined(__SANITIZE_ADDRESS__)
  // Three engines over the whole trace: seconds in release, minutes under ASan; the routing
  // code is exercised under ASan by tests/routing/prefix_routing_test.cc.
  GTEST_SKIP() << "the whole trace runs in the release suite";
#endif
  const Scenario sc = LoadScenario(RepoPath("scenarios/fleet/mooncake-x3.yaml"));
  ASSERT_EQ(sc.fleet.replicas, 3);
  const RunSummary aware = RunBehind(sc, routing::RouterPolicy::kGateway, true);
  const RunSummary blind = RunBehind(sc, routing::RouterPolicy::kGateway, false);
  // Measured: 16.8% of the prompt tokens found cached, against 8.6% without prefix-aware
  // routing; goodput 9.06 against 8.97 req/s; TTFT p95 7.69 s against 8.00 s.
  EXPECT_GT(PrefixHitRate(aware), 1.5 * PrefixHitRate(blind));
  EXPECT_GT(aware.goodput_rps, blind.goodput_rps);
  EXPECT_LT(aware.ttft_s.p95, blind.ttft_s.p95);
  // The promise holds as without it: few admitted requests dropped at the queue head.
  EXPECT_LT(aware.dropped_at_queue_head, 0.005 * aware.admitted);
}

}  // namespace
}  // namespace spillway
