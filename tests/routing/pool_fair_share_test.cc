// Fair shedding at the gateway (routing::PoolConfig::fair_share, Pool::Admit): the pool's own
// FairShare counts each request's flow (its fairness ID, else its tenant) as offered, forwarded
// or refused for load; while a flow refused for load has fallen below min_share_ratio x its
// offered share, a request of a flow served above r x its own share is refused 429 fair_share.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "routing/pool.h"
#include "routing/routing_test_util.h"

namespace spillway::routing {
namespace {

using routing_test::Priors;
using FairPool = ::spillway::routing::Pool;

/// Two gateway-routed endpoints with a full batch and 5 waiting each (0.5 s of queue), no wait
/// queue: a 100-token prompt is predicted at 0.525 s, within the 1 s SLO; a 3,000-token one at
/// 1.25 s (0.75 s of prefill), refused for load.
FairPool Contended(double min_share_ratio) {
  std::vector<EndpointState> states;
  for (int i = 0; i < 2; ++i) {
    states.emplace_back("e" + std::to_string(i), true, Priors());
  }
  PoolConfig config;
  config.router.policy = RouterPolicy::kGateway;
  config.router.ttft_slo_s = 1.0;
  config.queue.max_wait_s = 0;
  config.prediction.quantile = 0;
  config.fair_share.min_share_ratio = min_share_ratio;
  return FairPool(std::move(states), config);
}

/// The same load again at `now` (the forwards since the last scrape forgotten).
void Rescrape(FairPool* pool, Seconds now) {
  for (std::size_t i = 0; i < pool->size(); ++i) {
    pool->OnScrape(i, {.num_waiting = 5, .num_running = 4, .kv_usage = 0.5}, now);
  }
}

RouteRequest Of(const char* flow, std::int32_t prompt_tokens) {
  RouteRequest r;
  r.prompt_tokens = prompt_tokens;
  r.flow = flow;
  return r;
}

/// A request of `flow` placed at `now` under the same load.
FairPool::Placement Place(FairPool* pool, Ticket ticket, const char* flow,
                          std::int32_t prompt_tokens, Seconds now) {
  Rescrape(pool, now);
  return pool->Admit(ticket, Of(flow, prompt_tokens), now);
}
bool Sent(FairPool* pool, Ticket ticket, const char* flow, std::int32_t prompt_tokens,
          Seconds now) {
  return Place(pool, ticket, flow, prompt_tokens, now).pick.decision.forwarded();
}

TEST(PoolFairShareTest, AnOverServedFlowYieldsToOneRefusedForLoad) {
  FairPool pool = Contended(0.5);
  EXPECT_TRUE(Sent(&pool, 1, "chat", 100, 0));
  const FairPool::Placement docs = Place(&pool, 2, "docs", 3000, 0.01);
  EXPECT_EQ(docs.pick.decision.reason, OverloadReason::kQueueDelayExceeded);
  // docs: half the offered requests, none forwarded, refused for load: starved. chat is
  // served above its half.
  const FairPool::Placement chat = Place(&pool, 3, "chat", 100, 0.02);
  EXPECT_EQ(chat.kind, FairPool::Placement::Kind::kRouted);
  EXPECT_EQ(chat.pick.decision.verdict, Verdict::kShed);
  EXPECT_EQ(chat.pick.decision.reason, OverloadReason::kFairShare);
  EXPECT_EQ(chat.pick.decision.retry_after_s, 1);
  EXPECT_EQ(pool.endpoint(0).in_flight() + pool.endpoint(1).in_flight(), 1) << "not sent";
  bool docs_starved = false;
  for (const FlowShare& f : pool.FlowShares(0.02)) {
    docs_starved = docs_starved || (f.flow == "docs" && f.starved);
  }
  EXPECT_TRUE(docs_starved);
}

TEST(PoolFairShareTest, AForwardTheEndpointRefusedForLoadCountsAsContentionNotAdmission) {
  // Behind engines with admission of their own, the gateway forwards and the engine refuses:
  // that flow was not served. A refusal that is not for load (a 503, or the engine's own
  // fair_share) takes the admission back without contention.
  for (const bool for_load : {true, false}) {
    FairPool pool = Contended(0.5);
    ASSERT_TRUE(Sent(&pool, 1, "chat", 100, 0));
    ASSERT_TRUE(Sent(&pool, 2, "docs", 100, 0.01));
    pool.OnEndpointRefused("docs", for_load, 0.02);  // e.g. 429 queue_delay_exceeded
    const FairPool::Placement chat = Place(&pool, 3, "chat", 100, 0.03);
    EXPECT_EQ(chat.pick.decision.forwarded(), !for_load) << for_load;
    EXPECT_EQ(chat.pick.decision.reason == OverloadReason::kFairShare, for_load) << for_load;
  }
}

TEST(PoolFairShareTest, OffByDefaultAndWithoutContention) {
  FairPool off = Contended(0);
  ASSERT_TRUE(Sent(&off, 1, "chat", 100, 0));
  ASSERT_FALSE(Sent(&off, 2, "docs", 3000, 0.01));
  EXPECT_TRUE(Sent(&off, 3, "chat", 100, 0.02));
  EXPECT_TRUE(off.FlowShares(0.02).empty());
  // On, but every flow is served: nobody contends, nobody yields.
  FairPool on = Contended(0.5);
  for (int i = 0; i < 6; ++i) {
    EXPECT_TRUE(Sent(&on, 10 + i, i % 2 == 0 ? "chat" : "docs", 100, i * 0.1));
  }
}

}  // namespace
}  // namespace spillway::routing
