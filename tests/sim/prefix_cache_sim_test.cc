// Prefix caching in the simulator, measured on the shipped scenarios in the same test with the
// cache on and off: a shared 2,000-token system prompt is prefilled once (its hit rate and the
// burst's goodput), and the Mooncake trace on the long-context profile, whose prompts share
// 512-token blocks (hash_ids) but rarely within what one GPU's KV pool holds.

#include <gtest/gtest.h>

#include <string>

#include "sim_fixture.h"

namespace spillway {
namespace {

using simtest::RepoPath;

// Long runs on pools of 25k to 30k KV blocks: invariants checked at an amortized rate.
RunSummary RunAmortized(const Scenario& sc, AdmissionPolicy policy) {
  return simtest::RunSim(sc, policy, {}, 1, InvariantChecks::kAmortized);
}

double HitRate(const RunSummary& s) {
  return s.prefix_cache_queries_tokens > 0 ? static_cast<double>(s.prefix_cache_hits_tokens) /
                                                 static_cast<double>(s.prefix_cache_queries_tokens)
                                           : 0.0;
}

Scenario WithoutCache(Scenario sc) {
  sc.settings.enable_prefix_caching = false;
  return sc;
}

TEST(PrefixCacheSimTest, ASharedSystemPromptIsPrefilledOnceAndTheBurstServesSeventyPercentMore) {
  const Scenario sc = LoadScenario(RepoPath("scenarios/shared-system-prompt.yaml"));
  const RunSummary on = RunAmortized(sc, AdmissionPolicy::kForecast);
  const RunSummary off = RunAmortized(WithoutCache(sc), AdmissionPolicy::kForecast);
  // Measured: 56.6% of the prompt tokens found cached; none without the cache.
  EXPECT_GT(HitRate(on), 0.5);
  EXPECT_EQ(off.prefix_cache_hits_tokens, 0);
  EXPECT_EQ(off.prefix_cache_queries_tokens, 0);
  // Measured: the burst's goodput 21.80 against 12.35 req/s (x1.77), the whole run's 12.36 and
  // 8.57.
  ASSERT_EQ(on.phases.size(), 3u);
  EXPECT_GT(on.phases[1].goodput_rps, 1.7 * off.phases[1].goodput_rps);
  EXPECT_GT(on.goodput_rps, 1.4 * off.goodput_rps);
}

TEST(PrefixCacheSimTest, TheMooncakeTraceFindsItsSharedBlocksInTheLongContextPool) {
#if defined(__SANITIZE_ADDRESS__)
  // 31.8 s under ASan (2.5 s in release), which runs in `make test`; the counting view and the
  // cache it reads are exercised under ASan by the shorter tests here and in tests/kv/.
  GTEST_SKIP() << "the whole trace runs in the release suite";
#endif
  const Scenario sc = LoadScenario(RepoPath("scenarios/mooncake.yaml"));
  const RunSummary on = RunAmortized(sc, AdmissionPolicy::kForecast);
  const RunSummary off = RunAmortized(WithoutCache(sc), AdmissionPolicy::kForecast);
  // Served rather than refused for length: only the prompts past the 128k context are.
  EXPECT_EQ(on.rejected_by_status.at("400"), 10);  // measured: 10 of 3,993
  // Measured: 9.6% of the prompt tokens (an unbounded cache would find 65%: the trace's blocks
  // are shared across more KV than one GPU holds), goodput 2.95 against 2.86 req/s.
  EXPECT_GT(HitRate(on), 0.05);
  EXPECT_GE(on.goodput_rps, off.goodput_rps);
  EXPECT_GE(on.completed, off.completed);
  // Issue 14's goal row: at most 1% of the admitted dropped at the head, abandoned or late.
  // Measured: 5 dropped and 11 late of 3,028 (1.2% before the view stopped finding the blocks
  // a real allocation would evict).
  EXPECT_LE(on.dropped_at_queue_head + on.abandoned_after_admission + (on.completed - on.good),
            on.admitted / 100);
}

}  // namespace
}  // namespace spillway
