// PredictionErrors (admission/prediction_errors.h): the gateway learns how far its TTFT
// predictions fall short and routes against the SLO less that margin (Pool::Route).

#include "admission/prediction_errors.h"

#include <vector>

#include <gtest/gtest.h>

#include "routing/pool.h"
#include "routing/routing_test_util.h"

namespace spillway::routing {
namespace {

TEST(PredictionErrorsTest, TheMarginIsTheQuantileOfTheRecentErrorsOnceEnoughAreIn) {
  PredictionErrors e({.quantile = 0.9, .window = 100, .every = 10, .min_samples = 20});
  for (int i = 0; i < 19; ++i) {
    e.Add(0.5);
  }
  EXPECT_EQ(e.margin_s(), 0) << "fewer than min_samples";
  for (int i = 1; i <= 81; ++i) {  // 100 errors: 0.01 .. 0.81 and nineteen of 0.5
    e.Add(0.01 * i);
  }
  EXPECT_NEAR(e.margin_s(), 0.71, 1e-9) << "the 90th of the 100 sorted: 69 up to 0.5, then 0.51..";
}

TEST(PredictionErrorsTest, OnlyTheWindowCountsAndPessimismIsNotLoosened) {
  PredictionErrors e({.quantile = 0.5, .window = 10, .every = 1, .min_samples = 1});
  for (int i = 0; i < 10; ++i) {
    e.Add(1.0);
  }
  EXPECT_EQ(e.margin_s(), 1.0);
  for (int i = 0; i < 10; ++i) {
    e.Add(-0.3);  // predictions now too high: the margin floors at 0
  }
  EXPECT_EQ(e.margin_s(), 0.0);
  PredictionErrors off({.quantile = 0});
  for (int i = 0; i < 100; ++i) {
    off.Add(1.0);
  }
  EXPECT_EQ(off.margin_s(), 0.0);
}

// One endpoint, a batch of 4 with 5 waiting, scraped at 0: a 400-token prompt is predicted at
// 5 / 10 + 0.1 = 0.6 s. Once the gateway has seen its predictions fall 0.5 s short, it routes
// against 1.0 - 0.5 s and sheds that request.
TEST(PredictionErrorsTest, ThePoolRoutesAgainstTheSloLessTheLearnedMargin) {
  std::vector<EndpointState> states;
  states.emplace_back("e0", true, routing_test::Priors());
  PoolConfig config;
  config.router.ttft_slo_s = 1.0;
  config.prediction = {.quantile = 0.95, .window = 64, .every = 1, .min_samples = 8};
  Pool pool(std::move(states), config);
  pool.OnScrape(0, {.num_waiting = 5, .num_running = 4}, 0);
  EXPECT_TRUE(pool.Route({.prompt_tokens = 400}, 0.0).decision.forwarded());
  pool.OnFinish(0, 0.0, false);
  for (int i = 0; i < 8; ++i) {
    pool.OnFirstToken(0, 400, 1.1, false, 0.6);
  }
  EXPECT_NEAR(pool.prediction_margin_s(), 0.5, 1e-9);
  const RouteDecision d = pool.Route({.prompt_tokens = 400}, 0.0).decision;
  EXPECT_EQ(d.verdict, Verdict::kShed);
  EXPECT_EQ(d.reason, OverloadReason::kQueueDelayExceeded);
  for (int i = 0; i < 64; ++i) {
    pool.OnFirstToken(0, 400, 0.5, false, 0.6);  // accurate again: the margin goes
  }
  EXPECT_EQ(pool.prediction_margin_s(), 0.0);
  EXPECT_TRUE(pool.Route({.prompt_tokens = 400}, 0.0).decision.forwarded());
}

TEST(PredictionErrorsTest, NoMarginIsLearnedWithoutPredictions) {
  std::vector<EndpointState> states;
  states.emplace_back("e0", true, routing_test::Priors());
  PoolConfig config;
  config.router.policy = RouterPolicy::kRoundRobin;
  config.prediction = {.quantile = 0.95, .window = 64, .every = 1, .min_samples = 1};
  Pool pool(std::move(states), config);
  for (int i = 0; i < 10; ++i) {
    pool.OnFirstToken(0, 400, 3.0, false, 0.0);  // the baselines predict nothing
  }
  EXPECT_EQ(pool.prediction_margin_s(), 0.0);
}

}  // namespace
}  // namespace spillway::routing
