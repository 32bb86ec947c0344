// Prefix-aware routing: the gateway's index of what it sent where (PrefixIndex), the block
// hashes it names prompts by (the engine's for every block inside the shared segments), the
// gateway router's choice between a cached prefix and the load elsewhere, llm-d's prefix-cache
// scorer, and the pool recording each forward.

#include "routing/prefix_index.h"

#include <memory>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "routing/pool.h"
#include "routing/router.h"
#include "routing/routing_test_util.h"
#include "sched/block_hashes.h"

namespace spillway::routing {
namespace {

using routing_test::Priors;

std::shared_ptr<const PromptSegments> Segments(std::vector<std::uint64_t> ids,
                                               std::int32_t segment_tokens = 16) {
  return std::make_shared<const PromptSegments>(PromptSegments{segment_tokens, std::move(ids)});
}

/// `n` endpoints scraped at 0, `waiting[i]` queued behind a full batch of 4, caching prefixes.
std::vector<EndpointState> CachingPool(const std::vector<std::int32_t>& waiting,
                                       bool prefix_caching = true) {
  std::vector<EndpointState> pool;
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    pool.emplace_back("e" + std::to_string(i), true, Priors());
    pool.back().OnScrape({.num_waiting = waiting[i],
                          .num_running = 4,
                          .kv_usage = 0.5,
                          .prefix_caching = prefix_caching},
                         0);
  }
  return pool;
}

TEST(PrefixIndexTest, MatchIsTheLeadingRunOfBlocksHeld) {
  PrefixIndex index(100);
  index.Record(1, std::vector<std::uint64_t>{10, 11, 12});
  EXPECT_EQ(index.Match(1, std::vector<std::uint64_t>{10, 11, 12, 13}), 3);
  EXPECT_EQ(index.Match(1, std::vector<std::uint64_t>{10, 99, 12}), 1);  // stops at a miss
  EXPECT_EQ(index.Match(1, std::vector<std::uint64_t>{99, 10}), 0);      // the first missing
  EXPECT_EQ(index.Match(0, std::vector<std::uint64_t>{10}), 0);          // another endpoint
  EXPECT_EQ(index.Match(7, std::vector<std::uint64_t>{10}), 0);          // never recorded
  EXPECT_EQ(index.size(1), 3U);
}

TEST(PrefixIndexTest, PastItsCapacityAnEndpointDropsTheLeastRecentlySentChainTailFirst) {
  PrefixIndex index(4);
  index.Record(0, std::vector<std::uint64_t>{1, 2, 3});
  index.Record(0, std::vector<std::uint64_t>{7, 8});  // 5 blocks: the oldest chain's tail goes
  EXPECT_EQ(index.size(0), 4U);
  EXPECT_EQ(index.Match(0, std::vector<std::uint64_t>{1, 2, 3}), 2);
  EXPECT_EQ(index.Match(0, std::vector<std::uint64_t>{7, 8}), 2);
  index.Record(0, std::vector<std::uint64_t>{1, 2});  // used again: now the most recent
  index.Record(0, std::vector<std::uint64_t>{9});
  EXPECT_EQ(index.Match(0, std::vector<std::uint64_t>{1, 2}), 2);
  EXPECT_EQ(index.Match(0, std::vector<std::uint64_t>{7, 8}), 1);
  index.set_capacity(2);
  EXPECT_EQ(index.size(0), 2U);
  index.Forget(0);
  EXPECT_EQ(index.size(0), 0U);
  EXPECT_EQ(index.Match(0, std::vector<std::uint64_t>{1}), 0);
}

TEST(PrefixIndexTest, DropForgetsTheBlocksOfARequestTheEndpointDidNotStart) {
  PrefixIndex index(100);
  index.Record(0, std::vector<std::uint64_t>{1, 2, 3});
  index.Drop(0, std::vector<std::uint64_t>{2, 3, 9});
  EXPECT_EQ(index.size(0), 1U);
  EXPECT_EQ(index.Match(0, std::vector<std::uint64_t>{1, 2, 3}), 1);
  index.Drop(5, std::vector<std::uint64_t>{1});  // never recorded: nothing to do
  EXPECT_EQ(index.Match(0, std::vector<std::uint64_t>{1}), 1);
}

TEST(PrefixBlockHashesTest, TheGatewayNamesSharedBlocksAsTheEngineDoesAndLeavesTheOwnTailOut) {
  // 3 segments of 16 tokens shared, then the request's own: 2 blocks of 16... at block size 16
  // the first 3 blocks are shared.
  const auto segments = Segments({5, 6, 7});
  const std::vector<std::uint64_t> gateway = SharedPrefixBlockHashes(segments, 100, 16, 256);
  ASSERT_EQ(gateway.size(), 3U);
  for (const std::uint64_t id : {1U, 2U}) {  // whichever request: the same shared blocks
    RequestSpec spec;
    spec.id = id;
    spec.prompt_tokens = 100;
    spec.prompt_segments = segments;
    std::vector<std::uint64_t> engine;
    ExtendBlockHashes(spec, 16, 6, &engine);
    EXPECT_EQ(std::vector<std::uint64_t>(engine.begin(), engine.begin() + 3), gateway);
  }
  EXPECT_EQ(SharedPrefixBlockHashes(segments, 100, 16, 2).size(), 2U);   // max_blocks
  EXPECT_EQ(SharedPrefixBlockHashes(segments, 40, 16, 256).size(), 2U);  // a shorter prompt
  EXPECT_TRUE(SharedPrefixBlockHashes(nullptr, 100, 16, 256).empty());
  EXPECT_EQ(PromptPrefixBlocks({.enabled = false}, segments, 100), nullptr);
  EXPECT_EQ(PromptPrefixBlocks({}, Segments({5}), 10), nullptr);  // no whole block
  ASSERT_NE(PromptPrefixBlocks({}, segments, 100), nullptr);
  EXPECT_EQ(*PromptPrefixBlocks({}, segments, 100), gateway);
}

RouteRequest WithPrefix(std::int32_t prompt_tokens, std::int32_t shared_segments) {
  std::vector<std::uint64_t> ids;
  for (std::int32_t i = 0; i < shared_segments; ++i) {
    ids.push_back(1000 + static_cast<std::uint64_t>(i));
  }
  RouteRequest r{.prompt_tokens = prompt_tokens};
  r.prefix_blocks = PromptPrefixBlocks({}, Segments(ids), prompt_tokens);
  return r;
}

TEST(PrefixRoutingTest, TheGatewaySendsAPrefixWhereItIsCachedAndPredictsWithoutItsPrefill) {
  // 2,000 tokens, 1,600 of them shared; e2 holds them. Idle endpoints: 0.5 s of prefill, 0.1 s
  // at e2 (400 tokens at 4,000 tokens/s).
  const std::vector<EndpointState> pool = CachingPool({0, 0, 0});
  const RouteRequest request = WithPrefix(2000, 100);
  PrefixIndex index(31'250);
  index.Record(2, *request.prefix_blocks);
  RouterConfig config;
  Router router(config);
  for (int i = 0; i < 50; ++i) {
    const RouteDecision d = router.Route(request, pool, 0.1, &index);
    ASSERT_TRUE(d.forwarded());
    EXPECT_EQ(d.endpoint, 2);
    EXPECT_EQ(d.cached_tokens, 1600);
    EXPECT_NEAR(d.predicted_ttft_s, 0.1, 1e-9);
  }
  // Without the index (prefix routing off) the prefix counts for nothing: spread, full prefill.
  std::set<std::int32_t> picked;
  for (int i = 0; i < 50; ++i) {
    const RouteDecision d = router.Route(request, pool, 0.1, nullptr);
    picked.insert(d.endpoint);
    EXPECT_EQ(d.cached_tokens, 0);
    EXPECT_NEAR(d.predicted_ttft_s, 0.5, 1e-9);
  }
  EXPECT_EQ(picked.size(), 3U);
}

TEST(PrefixRoutingTest, APromptOfWholeBlocksIsNotCreditedItsLastBlock) {
  // 32 tokens, both blocks held: the engine computes the block of the last token (vLLM's
  // rule), so 16 are cached, not 31.
  const std::vector<EndpointState> pool = CachingPool({0, 0});
  const RouteRequest request = WithPrefix(32, 2);
  ASSERT_EQ(request.prefix_blocks->size(), 2U);
  PrefixIndex index(31'250);
  index.Record(0, *request.prefix_blocks);
  Router router(RouterConfig{});
  EXPECT_EQ(router.Route(request, pool, 0.1, &index).cached_tokens, 16);
  EXPECT_EQ(router.Route(WithPrefix(33, 2), pool, 0.1, &index).cached_tokens, 32);
}

TEST(PrefixRoutingTest, AnEndpointThatDoesNotReportPrefixCachingGetsNoCreditForIt) {
  const std::vector<EndpointState> pool = CachingPool({0, 0, 0}, /*prefix_caching=*/false);
  const RouteRequest request = WithPrefix(2000, 100);
  PrefixIndex index(31'250);
  index.Record(2, *request.prefix_blocks);
  Router router(RouterConfig{});
  std::set<std::int32_t> picked;
  for (int i = 0; i < 50; ++i) {
    const RouteDecision d = router.Route(request, pool, 0.1, &index);
    picked.insert(d.endpoint);
    EXPECT_EQ(d.cached_tokens, 0);
  }
  EXPECT_EQ(picked.size(), 3U);
}

TEST(PrefixRoutingTest, TheHolderWinsWhileItMeetsTheSloAndIsPassedOverOnceItCannot) {
  // e0 holds 400 of 800 tokens with 3 waiting: 0.3 + 0.1 s, against 0.2 s at idle e1. Both
  // meet the 1 s SLO: the holder wins (the prefill it saves is capacity).
  const RouteRequest request = WithPrefix(800, 25);
  PrefixIndex index(31'250);
  index.Record(0, *request.prefix_blocks);
  Router router(RouterConfig{});
  const std::vector<EndpointState> busy = CachingPool({3, 0});
  for (int i = 0; i < 20; ++i) {
    const RouteDecision d = router.Route(request, busy, 0.1, &index);
    EXPECT_EQ(d.endpoint, 0);
    EXPECT_EQ(d.cached_tokens, 400);
    EXPECT_NEAR(d.predicted_ttft_s, 0.4, 1e-9);
  }
  // 12 waiting: 1.3 s, past the SLO: passed over for e1.
  const std::vector<EndpointState> full = CachingPool({12, 0});
  for (int i = 0; i < 20; ++i) {
    const RouteDecision d = router.Route(request, full, 0.1, &index);
    EXPECT_EQ(d.endpoint, 1);
    EXPECT_EQ(d.cached_tokens, 0);
  }
  // Both hold it: the predictions decide, as without prefixes (e1, idle, always).
  index.Record(1, *request.prefix_blocks);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(router.Route(request, busy, 0.1, &index).endpoint, 1);
  }
}

TEST(PrefixRoutingTest, LlmdAddsItsPrefixCacheScorerAtWeightThreeToQueueAndKvAtTwo) {
  // e0: 2 waiting (queue score 0), holds the whole prefix (prefix score 1): 2x0 + 2x0.5 + 3x1 =
  // 4; e1: idle queue (1), nothing held: 2x1 + 2x0.5 = 3. The prefix wins.
  const std::vector<EndpointState> pool = CachingPool({2, 0}, /*prefix_caching=*/false);
  const RouteRequest request = WithPrefix(800, 50);
  PrefixIndex index(31'250);
  index.Record(0, *request.prefix_blocks);
  RouterConfig config;
  config.policy = RouterPolicy::kLlmd;
  Router router(config);
  EXPECT_EQ(router.Route(request, pool, 0.1, &index).endpoint, 0);
  // Half the prefix held (1.5 from the scorer): 2.5 against 3, the shorter queue wins.
  PrefixIndex half(31'250);
  half.Record(0, std::vector<std::uint64_t>(request.prefix_blocks->begin(),
                                            request.prefix_blocks->begin() + 25));
  EXPECT_EQ(router.Route(request, pool, 0.1, &half).endpoint, 1);
  // No prefix blocks at all: queue and KV alone, as before.
  EXPECT_EQ(router.Route({.prompt_tokens = 800}, pool, 0.1, &index).endpoint, 1);
}

TEST(PrefixRoutingTest, ThePoolRecordsEachForwardSoTheNextRequestOfThePrefixFollowsIt) {
  std::vector<EndpointState> endpoints;
  for (int i = 0; i < 4; ++i) {
    endpoints.emplace_back("e" + std::to_string(i), true, Priors());
    endpoints.back().OnScrape({.num_running = 0, .prefix_caching = true}, 0);
  }
  PoolConfig config;
  routing::Pool pool(std::move(endpoints), config);
  const RouteRequest request = WithPrefix(2000, 100);
  const Pool::Pick first = pool.Route(request, 0.1);
  ASSERT_TRUE(first.decision.forwarded());
  EXPECT_EQ(first.decision.cached_tokens, 0);
  EXPECT_TRUE(first.alone);
  EXPECT_EQ(pool.prefix_index_size(static_cast<std::size_t>(first.decision.endpoint)), 100U);
  for (int i = 0; i < 3; ++i) {
    const Pool::Pick next = pool.Route(request, 0.2);
    EXPECT_EQ(next.decision.endpoint, first.decision.endpoint);
    EXPECT_EQ(next.decision.cached_tokens, 1600);
    EXPECT_FALSE(next.alone);  // a cache hit does not measure prefill throughput
  }
  // An attempt the endpoint refused before starting: its blocks are no longer believed there.
  pool.OnNotStarted(static_cast<std::size_t>(first.decision.endpoint), request);
  EXPECT_EQ(pool.prefix_index_size(static_cast<std::size_t>(first.decision.endpoint)), 0U);
  pool.Route(request, 0.25);
  // The endpoint leaves and comes back: what it held is forgotten.
  pool.SetRemoved(static_cast<std::size_t>(first.decision.endpoint), true, 0.3);
  pool.SetRemoved(static_cast<std::size_t>(first.decision.endpoint), false, 0.3);
  EXPECT_EQ(pool.prefix_index_size(static_cast<std::size_t>(first.decision.endpoint)), 0U);
  // Prefix routing off: nothing is recorded.
  config.router.prefix.enabled = false;
  pool.Reconfigure(config);
  const Pool::Pick off = pool.Route(request, 0.4);
  EXPECT_EQ(off.decision.cached_tokens, 0);
}

}  // namespace
}  // namespace spillway::routing
