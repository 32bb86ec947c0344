// The model cascade in the simulator (routing/cascade.h, sim/gateway_front.h): the reference
// burst against one seed-a100-7b engine with a Llama-3.2-1B fallback pool
// (scenarios/fleet/seed-burst-cascade.yaml), the lesson's §4 row "Model Cascade (to 1B)": 10 req/s
// served by the 7B, 20 by the 1B, nothing shed. The gateway's ledger is checked after every event
// inside the simulator (a broken one throws SimInvariantError).

#include <gtest/gtest.h>

#include <functional>

#include "sim/sim_pools.h"
#include "sim_fixture.h"

namespace spillway {
namespace {

using simtest::RepoPath;
using simtest::Resolve;

constexpr std::size_t kCascadeBurst = 1;  // steps: 8 req/s, 30 req/s (the burst), 8 req/s

class CascadeSimTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scenario_ = new Scenario(LoadScenario(RepoPath("scenarios/fleet/seed-burst-cascade.yaml")));
  }
  static void TearDownTestSuite() { delete scenario_; }

  /// The scenario's pools under `admission` behind `router`; `cascade` false: the fallback
  /// pool is there but the first pool names no fallbacks.
  static RunSummary Run(AdmissionPolicy admission, routing::RouterPolicy router,
                        bool cascade = true) {
    return RunWith(admission, router, [&](SimOptions& opt) {
      if (!cascade) {
        opt.pools.front().fallbacks.clear();
      }
    });
  }
  /// The scenario's pools, predictive engines behind the gateway, as `change` makes them.
  static RunSummary RunWith(AdmissionPolicy admission, routing::RouterPolicy router,
                            const std::function<void(SimOptions&)>& change) {
    SimOptions opt;
    opt.invariant_checks = InvariantChecks::kAmortized;
    opt.pools = ResolveSimPools(*scenario_, admission, RepoPath("profiles"));
    opt.gateway = SimGateway{};
    opt.gateway->router.policy = router;
    change(opt);
    return Simulate(*scenario_, Resolve(*scenario_, admission), opt);
  }
  static double BurstBy(const RunSummary& s, const std::string& model) {
    const auto it = s.served_model.find(model);
    return it == s.served_model.end() ? 0 : it->second.phase_goodput_rps.at(kCascadeBurst);
  }

  static Scenario* scenario_;
};

Scenario* CascadeSimTest::scenario_ = nullptr;

TEST_F(CascadeSimTest, ThePoolsAreTheScenariosWithTheirOwnProfiles) {
  const std::vector<SimPool> pools =
      ResolveSimPools(*scenario_, AdmissionPolicy::kPredictive, RepoPath("profiles"));
  ASSERT_EQ(pools.size(), 2u);
  EXPECT_EQ(pools[0].model, "llama-2-7b");
  EXPECT_EQ(pools[0].fallbacks, std::vector<std::int32_t>{1});
  EXPECT_EQ(pools[1].model, "llama-3.2-1b");
  EXPECT_EQ(pools[0].engine->profile.name, "seed-a100-7b");
  EXPECT_EQ(pools[1].engine->profile.name, "a100-llama3.2-1b");
}

// Measured (seed 1, predictive engines behind the gateway): 2,498 offered, 2,497 good, none
// refused at the door; during the burst 29.27 req/s of goodput, 14.75 served by the 7B and
// 14.52 by the 1B; p95 TTFT 0.685 s. Without the cascade the same pools serve 15.22 req/s in
// the burst and refuse 803. Bounds: at least 95% of the 30 req/s burst served within the
// SLOs, at most 1% of the attempts refused or dropped, the 7B serving at least its 10 req/s,
// the 1B the rest.
TEST_F(CascadeSimTest, TheFallbackAbsorbsTheBurstAndNothingIsShed) {
  const RunSummary s = Run(AdmissionPolicy::kPredictive, routing::RouterPolicy::kGateway);
  EXPECT_GT(s.phases.at(kCascadeBurst).goodput_rps, 0.95 * 30);
  EXPECT_LE(s.rejected_total + s.dropped_at_queue_head, s.offered / 100);
  EXPECT_GE(BurstBy(s, "llama-2-7b"), 10);
  EXPECT_GT(BurstBy(s, "llama-3.2-1b"), 10);
  EXPECT_LT(s.ttft_s.p95, 1.0);
  EXPECT_EQ(s.good, s.served_model.at("llama-2-7b").good + s.served_model.at("llama-3.2-1b").good);

  const RunSummary alone =
      Run(AdmissionPolicy::kPredictive, routing::RouterPolicy::kGateway, /*cascade=*/false);
  EXPECT_LT(alone.phases.at(kCascadeBurst).goodput_rps, 0.6 * 30);
  EXPECT_GT(alone.rejected_total, s.offered / 5);
  EXPECT_EQ(BurstBy(alone, "llama-3.2-1b"), 0) << "nothing reaches a pool no one falls back to";
}

// The cascade follows the engines' own refusals behind a balancer that predicts nothing
// (measured: round-robin in front of predictive engines, 28.57 req/s in the burst, 13.35 by
// the 1B), and the gateway's predictions in front of engines that admit everything (28.60).
TEST_F(CascadeSimTest, ItCascadesOnTheEnginesRefusalsAndOnTheGatewaysPredictions) {
  const RunSummary balancer = Run(AdmissionPolicy::kPredictive, routing::RouterPolicy::kRoundRobin);
  EXPECT_GT(balancer.phases.at(kCascadeBurst).goodput_rps, 0.9 * 30);
  EXPECT_GT(BurstBy(balancer, "llama-3.2-1b"), 10);
  const RunSummary first_stage = Run(AdmissionPolicy::kUnbounded, routing::RouterPolicy::kGateway);
  EXPECT_GT(first_stage.phases.at(kCascadeBurst).goodput_rps, 0.9 * 30);
  EXPECT_GT(BurstBy(first_stage, "llama-3.2-1b"), 10);
}

// The clamp step (routing/cascade.h): the 7B pool with max_tokens clamped to 32 past half its
// TTFT budget (scenarios/fleet/seed-burst-clamp.yaml). Measured (seed 1, burst goodput): the
// clamp alone, no fallback, 24.88 req/s against 14.75 as asked; with the 1B behind it, the
// default order (primary, clamp, fallback) 29.22 req/s, 24.88 by the 7B and 4.33 by the 1B;
// (primary, fallback, clamp) 29.28, 13.62 by the 7B and 15.67 by the 1B. Bounds: the clamp
// alone at least 1.3x the pool as asked, each order at least 90% of the burst, and the order
// deciding which model serves more.
TEST_F(CascadeSimTest, TheClampStepServesMoreOnThePrimaryInTheOrderGiven) {
  const auto clamp = [](SimOptions& opt) { opt.pools.front().degrade = {32, 0.5}; };
  const RunSummary clamped =
      RunWith(AdmissionPolicy::kPredictive, routing::RouterPolicy::kGateway, [&](SimOptions& o) {
        clamp(o);
        o.pools.front().fallbacks.clear();
      });
  const RunSummary alone =
      Run(AdmissionPolicy::kPredictive, routing::RouterPolicy::kGateway, /*cascade=*/false);
  EXPECT_GT(clamped.degraded, 0);
  EXPECT_EQ(alone.degraded, 0);
  EXPECT_GT(clamped.phases.at(kCascadeBurst).goodput_rps,
            1.3 * alone.phases.at(kCascadeBurst).goodput_rps);

  const RunSummary clamp_first =
      RunWith(AdmissionPolicy::kPredictive, routing::RouterPolicy::kGateway, clamp);
  const RunSummary fallback_first =
      RunWith(AdmissionPolicy::kPredictive, routing::RouterPolicy::kGateway, [&](SimOptions& o) {
        clamp(o);
        o.gateway->cascade_order = {routing::CascadeStep::kPrimary, routing::CascadeStep::kFallback,
                                    routing::CascadeStep::kClamp};
      });
  EXPECT_GT(BurstBy(clamp_first, "llama-2-7b"), BurstBy(fallback_first, "llama-2-7b"));
  EXPECT_LT(BurstBy(clamp_first, "llama-3.2-1b"), BurstBy(fallback_first, "llama-3.2-1b"));
  EXPECT_GT(clamp_first.degraded, fallback_first.degraded);
  EXPECT_GT(clamp_first.phases.at(kCascadeBurst).goodput_rps, 0.9 * 30);
  EXPECT_GT(fallback_first.phases.at(kCascadeBurst).goodput_rps, 0.9 * 30);
}

TEST_F(CascadeSimTest, TheClampScenarioIsTheCascadeWithTheClamp) {
  const Scenario clamp = LoadScenario(RepoPath("scenarios/fleet/seed-burst-clamp.yaml"));
  const std::vector<SimPool> pools =
      ResolveSimPools(clamp, AdmissionPolicy::kPredictive, RepoPath("profiles"));
  ASSERT_EQ(pools.size(), 2u);
  EXPECT_EQ(pools[0].degrade, (routing::DegradeConfig{32, 0.5})) << "as the test above runs it";
  EXPECT_EQ(pools[0].fallbacks, std::vector<std::int32_t>{1});
  EXPECT_EQ(clamp.fleet.cascade_order,
            (std::vector<std::string>{"primary", "clamp", "fallback", "reject"}));
  EXPECT_EQ(clamp.arrival.steps.size(), scenario_->arrival.steps.size());
}

// The exact-result cache in the simulator (the gateway's cache step, routing/result_cache.h):
// the reference burst against one 7B engine, the chat class (70%) asking one of 50 FAQ prompts
// (scenarios/fleet/seed-burst-cache.yaml). Measured (seed 1, predictive engine behind the
// gateway): 1,663 of 2,498 requests answered from the cache, 26.62 req/s of goodput in the
// burst, 164 refused; without the cache the same arrivals give 14.93 req/s (862 refused).
// Bounds: the cache answers at least half the requests and the burst goodput is at least 1.5x
// that without it.
TEST(CacheSimTest, TheCacheAnswersTheFaqAndTheEngineServesTheRest) {
  const Scenario sc = LoadScenario(RepoPath("scenarios/fleet/seed-burst-cache.yaml"));
  const auto run = [&](std::int64_t entries) {
    SimOptions opt;
    opt.invariant_checks = InvariantChecks::kAmortized;
    opt.gateway = SimGateway{};
    opt.gateway->cache.max_entries = entries;
    opt.gateway->cache.ttl_s = 300;
    return Simulate(sc, Resolve(sc, AdmissionPolicy::kPredictive), opt);
  };
  const RunSummary cached = run(sc.fleet.cache_max_entries);
  const RunSummary uncached = run(0);
  EXPECT_EQ(sc.fleet.cache_max_entries, 1000);
  EXPECT_GT(cached.cache_hits, cached.offered / 2);
  EXPECT_EQ(uncached.cache_hits, 0);
  EXPECT_GT(cached.phases.at(kCascadeBurst).goodput_rps,
            1.5 * uncached.phases.at(kCascadeBurst).goodput_rps);
  EXPECT_EQ(cached.completed, cached.good) << "a hit is completed within every SLO";

  // At most 10 entries for 50 prompts: the least recently used leave, fewer hits.
  EXPECT_LT(run(10).cache_hits, cached.cache_hits);
}

}  // namespace
}  // namespace spillway
