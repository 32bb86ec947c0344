// Router: forward to an endpoint that can meet the TTFT SLO (power of two choices among them),
// 429 queue_delay_exceeded when none can, 503 no_endpoint when none takes work; the staleness
// modes; the peers' pickers (round-robin, least-requests, llm-d's saturation detector); the
// conservation ledger.

#include "routing/router.h"

#include <map>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "engine/contract_status.h"

#include "routing/routing_test_util.h"

namespace spillway::routing {
namespace {

using routing_test::Priors;

/// `n` endpoints scraped at `now` with `waiting[i]` queued behind a full batch of 4.
std::vector<EndpointState> Pool(const std::vector<std::int32_t>& waiting, Seconds now = 0) {
  std::vector<EndpointState> pool;
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    pool.emplace_back("e" + std::to_string(i), true, Priors());
    pool.back().OnScrape({.num_waiting = waiting[i], .num_running = 4, .kv_usage = 0.5}, now);
  }
  return pool;
}

RouterConfig Config(RouterPolicy policy = RouterPolicy::kGateway) {
  RouterConfig c;
  c.policy = policy;
  c.ttft_slo_s = 1.0;
  c.stale_after_s = 1.0;
  return c;
}

TEST(RouterTest, ForwardsOnlyToEndpointsThatMeetTheSlo) {
  // Predicted TTFT: waiting / 10 + 0.1 s. Only e1 (2 waiting: 0.3 s) meets 1 s.
  const std::vector<EndpointState> pool = Pool({20, 2, 15});
  Router router(Config());
  for (int i = 0; i < 20; ++i) {
    const RouteDecision d = router.Route({.prompt_tokens = 400}, pool, 0.1);
    ASSERT_TRUE(d.forwarded());
    EXPECT_EQ(d.endpoint, 1);
    EXPECT_NEAR(d.predicted_ttft_s, 0.3, 1e-9);
  }
}

TEST(RouterTest, PowerOfTwoChoicesSpreadsLoadAndNeverPicksTheWorstOfThree) {
  const std::vector<EndpointState> pool = Pool({0, 1, 2});  // all meet the SLO
  Router router(Config());
  std::set<std::int32_t> picked;
  for (int i = 0; i < 200; ++i) {
    const RouteDecision d = router.Route({.prompt_tokens = 400}, pool, 0.1);
    ASSERT_TRUE(d.forwarded());
    picked.insert(d.endpoint);
  }
  // Two distinct of three drawn: the worst (e2) always loses, e1 wins when drawn with e2.
  EXPECT_EQ(picked, (std::set<std::int32_t>{0, 1}));
}

TEST(RouterTest, PredictionsWithinTheTieToleranceShareTheLoad) {
  // Queues of 0 and 0.3 requests' worth: 30 ms apart at 10 completions/s, inside the 50 ms
  // tolerance, so each endpoint wins as often as it is drawn first.
  std::vector<EndpointState> pool = Pool({0, 0, 0});
  pool[2].OnForward(0.05);  // one more ahead there since the scrape: 100 ms, outside it
  Router router(Config());
  std::map<std::int32_t, int> wins;
  for (int i = 0; i < 300; ++i) {
    ++wins[router.Route({.prompt_tokens = 120}, pool, 0.1).endpoint];
  }
  EXPECT_GT(wins[0], 100);
  EXPECT_GT(wins[1], 100);
  EXPECT_LT(wins[2], wins[0]) << "the later one loses when drawn against an earlier one";
}

TEST(RouterTest, TheSameSeedMakesTheSameChoices) {
  const std::vector<EndpointState> pool = Pool({0, 0, 0, 0});
  Router a(Config());
  Router b(Config());
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(a.Route({.prompt_tokens = 100}, pool, 0.1).endpoint,
              b.Route({.prompt_tokens = 100}, pool, 0.1).endpoint);
  }
}

TEST(RouterTest, ShedsWith429AndThePoolsDrainTimeWhenNoEndpointCanMeetTheSlo) {
  const std::vector<EndpointState> pool = Pool({25, 35});
  Router router(Config());
  const RouteDecision d = router.Route({.prompt_tokens = 400}, pool, 0.1);
  EXPECT_EQ(d.verdict, Verdict::kShed);
  EXPECT_EQ(d.reason, OverloadReason::kQueueDelayExceeded);
  EXPECT_EQ(HttpStatus({.verdict = d.verdict, .reason = d.reason}), 429);
  EXPECT_EQ(d.retry_after_s, 3.0) << "60 ahead at 20 req/s";
}

TEST(RouterTest, APromptWhosePrefillAloneExceedsTheSloGoesToAnIdleEndpointNotTold429) {
  // 8,000 tokens at 4,000 tokens/s: 2 s of prefill against a 1 s SLO on any endpoint, however
  // idle; no wait would make it fit, so no "retry later" while an endpoint could start it now:
  // it goes there and the engine decides (serves it late, 400 for its context, or its own
  // admission).
  Router router(Config());
  const RouteDecision d = router.Route({.prompt_tokens = 8000}, Pool({25, 0}), 0.1);
  ASSERT_TRUE(d.forwarded());
  EXPECT_EQ(d.endpoint, 1);
  EXPECT_NEAR(d.predicted_ttft_s, 2.0, 1e-9);
  // A tiny SLO of its own, the same.
  EXPECT_TRUE(
      router.Route({.prompt_tokens = 400, .ttft_slo_s = 0.05}, Pool({25, 0}), 0.1).forwarded());
  // With a wait ahead of it everywhere it is shed as any other (served once a queue empties).
  EXPECT_EQ(router.Route({.prompt_tokens = 8000}, Pool({25, 3}), 0.1).verdict, Verdict::kShed);
  // A prompt that would fit on an idle endpoint is shed when the queues are too long.
  EXPECT_FALSE(router.Route({.prompt_tokens = 2000}, Pool({25, 35}), 0.1).forwarded());
}

TEST(RouterTest, ARequestsOwnSloOverridesTheConfigs) {
  const std::vector<EndpointState> pool = Pool({15});  // predicted 1.6 s
  Router router(Config());
  EXPECT_FALSE(router.Route({.prompt_tokens = 400}, pool, 0.1).forwarded());
  EXPECT_TRUE(router.Route({.prompt_tokens = 400, .ttft_slo_s = 2.0}, pool, 0.1).forwarded());
}

TEST(RouterTest, NoEndpointTakingWorkIs503NoEndpoint) {
  std::vector<EndpointState> pool = Pool({0, 0, 0});
  pool[0].set_health(EndpointHealth::kDown);
  pool[1].set_health(EndpointHealth::kDraining);
  pool[2].set_health(EndpointHealth::kEjected);
  for (const RouterPolicy policy : {RouterPolicy::kGateway, RouterPolicy::kRoundRobin,
                                    RouterPolicy::kLeastRequests, RouterPolicy::kLlmd}) {
    Router router(Config(policy));
    const RouteDecision d = router.Route({.prompt_tokens = 100}, pool, 0.1);
    EXPECT_EQ(d.verdict, Verdict::kHardLimit) << ToString(policy);
    EXPECT_EQ(d.reason, OverloadReason::kNoEndpoint) << ToString(policy);
    EXPECT_EQ(HttpStatus({.verdict = d.verdict, .reason = d.reason}), 503);
  }
}

TEST(RouterTest, DrainingEndpointsGetNoNewWork) {
  std::vector<EndpointState> pool = Pool({0, 5});  // e1: 0.5 s + prefill, within the SLO
  pool[0].set_health(EndpointHealth::kDraining);
  Router router(Config());
  const RouteDecision d = router.Route({.prompt_tokens = 100}, pool, 0.1);
  ASSERT_TRUE(d.forwarded());
  EXPECT_EQ(d.endpoint, 1);
}

TEST(RouterTest, StaleMetricsFailCloseCountTheEndpointSaturated) {
  std::vector<EndpointState> pool = Pool({0, 0});
  pool[1].OnScrape({.num_waiting = 0, .num_running = 4, .kv_usage = 0.5}, 10.0);  // e0 stale
  RouterConfig c = Config();
  c.staleness = Staleness::kFailClose;
  Router router(c);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(router.Route({.prompt_tokens = 100}, pool, 10.5).endpoint, 1);
  }
  // Every endpoint stale: saturated, so 429 (not 503: they are up).
  const RouteDecision d = router.Route({.prompt_tokens = 100}, pool, 30.0);
  EXPECT_EQ(d.reason, OverloadReason::kQueueDelayExceeded);
}

TEST(RouterTest, StaleMetricsFailOpenRouteOnTheGatewaysOwnInFlightCount) {
  std::vector<EndpointState> pool = Pool({30, 30});  // the last scrape said overloaded
  RouterConfig c = Config();
  c.staleness = Staleness::kFailOpen;
  Router router(c);
  EXPECT_FALSE(router.Route({.prompt_tokens = 100}, pool, 0.5).forwarded()) << "fresh: 3.1 s";
  // Stale at 5 s: predicted from in-flight (0) against the learned batch of 4.
  EXPECT_TRUE(router.Route({.prompt_tokens = 100}, pool, 5.0).forwarded());
  for (int i = 0; i < 4 + 11; ++i) {  // 4 fill the batches, 11 more wait at 10 req/s
    pool[0].OnForward(5.0);
    pool[1].OnForward(5.0);
  }
  EXPECT_FALSE(router.Route({.prompt_tokens = 100}, pool, 5.0).forwarded())
      << "11 ahead on each: 1.1 s + prefill";
}

TEST(RouterTest, AnEndpointWithoutMetricsIsRoutedOnTheGatewaysOwnCounts) {
  std::vector<EndpointState> pool;
  pool.emplace_back("hosted", /*exports_metrics=*/false, Priors());
  RouterConfig c = Config();
  c.staleness = Staleness::kFailClose;  // no metrics is not staleness
  Router router(c);
  EXPECT_TRUE(router.Route({.prompt_tokens = 100}, pool, 0.0).forwarded());
}

TEST(RouterTest, RoundRobinTakesTheEligibleEndpointsInTurn) {
  std::vector<EndpointState> pool = Pool({50, 50, 50});
  pool[1].set_health(EndpointHealth::kDown);
  Router router(Config(RouterPolicy::kRoundRobin));
  std::vector<std::int32_t> order;
  for (int i = 0; i < 4; ++i) {
    const RouteDecision d = router.Route({.prompt_tokens = 100}, pool, 0.1);
    ASSERT_TRUE(d.forwarded()) << "round-robin never sheds";
    order.push_back(d.endpoint);
  }
  EXPECT_EQ(order, (std::vector<std::int32_t>{0, 2, 0, 2}));
}

TEST(RouterTest, LeastRequestsPicksTheFewestInFlightLowestIndexOnTies) {
  std::vector<EndpointState> pool = Pool({0, 0, 0});
  pool[0].OnForward(0);
  pool[0].OnForward(0);
  pool[1].OnForward(0);
  Router router(Config(RouterPolicy::kLeastRequests));
  EXPECT_EQ(router.Route({.prompt_tokens = 100}, pool, 0.1).endpoint, 2);
  pool[2].OnForward(0);
  EXPECT_EQ(router.Route({.prompt_tokens = 100}, pool, 0.1).endpoint, 1);
}

TEST(RouterTest, LlmdSaturatesAtQueueFiveKvPointEightOrMetricsOlderThan200Ms) {
  std::vector<EndpointState> pool = Pool({5, 0, 1});
  pool[1].OnScrape({.num_waiting = 0, .num_running = 4, .kv_usage = 0.8}, 0.0);
  Router router(Config(RouterPolicy::kLlmd));
  // e0 (queue 5) and e1 (KV 0.8) saturated: e2.
  EXPECT_EQ(router.Route({.prompt_tokens = 100}, pool, 0.1).endpoint, 2);
  // At 0.3 s every scrape is older than 200 ms: all saturated. A sheddable request (priority
  // > 0) gets 429; a default one is dispatched all the same, to the best score.
  const RouteDecision d = router.Route({.prompt_tokens = 100, .priority = 1}, pool, 0.3);
  EXPECT_EQ(d.verdict, Verdict::kShed);
  EXPECT_EQ(d.reason, OverloadReason::kQueueDelayExceeded);
  const RouteDecision critical = router.Route({.prompt_tokens = 100}, pool, 0.3);
  ASSERT_TRUE(critical.forwarded());
  EXPECT_EQ(critical.endpoint, 2) << "scores: e0 0 + 0.5, e1 1 + 0.2, e2 0.8 + 0.5";
}

TEST(RouterTest, LlmdScoresShortQueueAndFreeKv) {
  std::vector<EndpointState> pool;
  for (const auto& [waiting, kv] :
       std::vector<std::pair<std::int32_t, double>>{{4, 0.1}, {0, 0.7}, {2, 0.4}}) {
    pool.emplace_back("e", true, Priors());
    pool.back().OnScrape({.num_waiting = waiting, .num_running = 4, .kv_usage = kv}, 0.0);
  }
  Router router(Config(RouterPolicy::kLlmd));
  // Queue score (1 for the shortest, 0 for the longest) + free KV: e0 0 + 0.9, e1 1 + 0.3,
  // e2 0.5 + 0.6.
  EXPECT_EQ(router.Route({.prompt_tokens = 100}, pool, 0.1).endpoint, 1);
}

TEST(RouterTest, ARetryNeverGoesToAnEndpointItAlreadyTried) {
  for (const RouterPolicy policy : {RouterPolicy::kGateway, RouterPolicy::kRoundRobin,
                                    RouterPolicy::kLeastRequests, RouterPolicy::kLlmd}) {
    const std::vector<EndpointState> pool = Pool({0, 0, 0});
    Router router(Config(policy));
    RouteRequest r{.prompt_tokens = 100};
    r.exclude = {0, 2};
    for (int i = 0; i < 5; ++i) {
      const RouteDecision d = router.Route(r, pool, 0.1);
      ASSERT_TRUE(d.forwarded()) << ToString(policy);
      EXPECT_EQ(d.endpoint, 1) << ToString(policy);
    }
    r.exclude = {0, 1, 2};
    const RouteDecision none = router.Route(r, pool, 0.1);
    EXPECT_EQ(none.verdict, Verdict::kHardLimit) << ToString(policy);
    EXPECT_EQ(none.reason, OverloadReason::kNoEndpoint) << ToString(policy);
  }
}

TEST(RouterTest, DrainTimeIsTheQueueAheadOverTheServiceRatesOfEndpointsTakingWork) {
  // 25 and 35 waiting behind full batches of 4, 10 completions/s each: (25 + 35) / 20 = 3 s.
  std::vector<EndpointState> pool = Pool({25, 35, 500});
  pool[2].set_health(EndpointHealth::kDraining);
  const Router router(Config());
  EXPECT_EQ(router.DrainTime(pool, 0.1), 3.0);
  EXPECT_EQ(router.DrainTime(Pool({0}), 0.1), 1.0) << "at least 1 s";
}

TEST(RouterTest, PolicyAndStalenessNamesRoundTrip) {
  for (const RouterPolicy p : {RouterPolicy::kGateway, RouterPolicy::kRoundRobin,
                               RouterPolicy::kLeastRequests, RouterPolicy::kLlmd}) {
    RouterPolicy parsed = RouterPolicy::kRoundRobin;
    ASSERT_TRUE(ParseRouterPolicy(ToString(p), &parsed));
    EXPECT_EQ(parsed, p);
  }
  RouterPolicy unchanged = RouterPolicy::kLlmd;
  EXPECT_FALSE(ParseRouterPolicy("random", &unchanged));
  EXPECT_EQ(unchanged, RouterPolicy::kLlmd);
  for (const Staleness s : {Staleness::kFailClose, Staleness::kFailOpen}) {
    Staleness parsed = Staleness::kFailOpen;
    ASSERT_TRUE(ParseStaleness(ToString(s), &parsed));
    EXPECT_EQ(parsed, s);
  }
  Staleness same = Staleness::kFailClose;
  EXPECT_FALSE(ParseStaleness("fail_open", &same));
}

TEST(RouteLedgerTest, BalancedWhenEveryRequestIsInExactlyOneState) {
  RouteLedger l;
  EXPECT_TRUE(l.Balanced());
  l.received = 10;
  l.shed = 3;
  l.in_flight = 4;
  l.completed = 2;
  l.cancelled = 1;
  EXPECT_TRUE(l.Balanced());
  l.failed = 1;
  EXPECT_FALSE(l.Balanced());
}

}  // namespace
}  // namespace spillway::routing
