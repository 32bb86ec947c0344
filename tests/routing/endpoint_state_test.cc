// EndpointState: the queue ahead from a scrape plus the gateway's own sends since, the service
// rate measured over busy time, prefill throughput from requests sent alone, and the TTFT
// prediction built from them.

#include "routing/endpoint_state.h"

#include <gtest/gtest.h>

#include "routing/routing_test_util.h"

namespace spillway::routing {
namespace {

constexpr double kTol = 1e-9;

using routing_test::Priors;

TEST(EndpointStateTest, QueueAheadCountsTheScrapeAndTheSendsSinceBeyondTheBatch) {
  EndpointState e("a", /*exports_metrics=*/true, Priors());
  e.OnScrape({.num_waiting = 3, .num_running = 4, .kv_usage = 0.5}, 0.0);
  EXPECT_EQ(e.MaxRunning(), 4) << "learned from the scrape";
  EXPECT_NEAR(e.QueueAhead(true), 3, kTol);
  e.OnForward(0.1);
  e.OnForward(0.1);
  EXPECT_NEAR(e.QueueAhead(true), 5, kTol) << "two sent since the scrape";
  e.OnFinish(0.2, true);
  EXPECT_NEAR(e.QueueAhead(true), 4, kTol) << "one ended since the scrape";
  // Stale: the gateway's own in-flight count (1) against the learned batch of 4.
  EXPECT_NEAR(e.QueueAhead(false), 0, kTol);
  e.OnScrape({.num_waiting = 0, .num_running = 2, .kv_usage = 0.2}, 0.5);
  EXPECT_NEAR(e.QueueAhead(true), 0, kTol) << "a new scrape restarts the counts";
  EXPECT_EQ(e.MaxRunning(), 4) << "the most seen running is kept";
}

TEST(EndpointStateTest, OnlyAFullBatchTeachesTheCeilingALightLoadDoesNotLowerIt) {
  EndpointState e("a", true, Priors());
  e.OnScrape({.num_waiting = 0, .num_running = 1, .kv_usage = 0.1}, 0.0);
  EXPECT_EQ(e.MaxRunning(), 4) << "one running and no queue says nothing of the ceiling";
  e.OnScrape({.num_waiting = 0, .num_running = 6, .kv_usage = 0.3}, 1.0);
  EXPECT_EQ(e.MaxRunning(), 6) << "six ran at once";
  e.OnScrape({.num_waiting = 2, .num_running = 9, .kv_usage = 0.9}, 2.0);
  EXPECT_EQ(e.MaxRunning(), 9) << "a queue behind nine: the batch is nine";
}

TEST(EndpointStateTest, MetricsAgeIsInfiniteBeforeTheFirstScrapeAndWithoutMetrics) {
  EndpointState scraped("a", true, Priors());
  EXPECT_EQ(scraped.MetricsAge(5.0), kNever);
  scraped.OnScrape({}, 4.0);
  EXPECT_NEAR(scraped.MetricsAge(5.0), 1.0, kTol);
  EndpointState hosted("b", false, Priors());
  hosted.OnScrape({}, 4.0);
  EXPECT_EQ(hosted.MetricsAge(5.0), kNever);
}

TEST(EndpointStateTest, ServiceRateIsMeasuredOverBusyTimeOnly) {
  EndpointState e("a", true, Priors());
  EXPECT_NEAR(e.ServiceRate(), 10, kTol) << "the prior until measured";
  // Busy from 0 to 1 s: 4 completions. Then idle for 10 s (not counted), busy 11 to 12 s.
  for (int i = 0; i < 4; ++i) {
    e.OnForward(0.0);
  }
  for (int i = 1; i <= 4; ++i) {
    e.OnFinish(0.25 * i, true);
  }
  EXPECT_NEAR(e.ServiceRate(), 4.0, kTol);
  e.OnForward(11.0);
  e.OnFinish(12.0, true);  // 1 completion in 1 busy second: smoothed 4 + 0.3 * (1 - 4)
  EXPECT_NEAR(e.ServiceRate(), 3.1, kTol);
}

TEST(EndpointStateTest, FailuresEndRequestsWithoutCountingAsCompletions) {
  EndpointState e("a", true, Priors());
  e.OnForward(0.0);
  e.OnForward(0.0);
  e.OnFinish(0.5, false);
  e.OnFinish(1.5, false);
  EXPECT_EQ(e.in_flight(), 0);
  EXPECT_NEAR(e.ServiceRate(), 10, kTol) << "no completion measured: still the prior";
}

TEST(EndpointStateTest, PrefillRateComesFromRequestsSentAlone) {
  EndpointState e("a", true, Priors());
  e.OnFirstToken(1000, 0.5, /*alone=*/false);
  EXPECT_NEAR(e.PrefillRate(), 4000, kTol) << "a queued request's TTFT is not prefill";
  e.OnFirstToken(1000, 0.5, /*alone=*/true);
  EXPECT_NEAR(e.PrefillRate(), 2000, kTol);
}

TEST(EndpointStateTest, AShortPromptsTtftTeachesNothingAboutPrefill) {
  EndpointState e("a", true, Priors());
  for (int i = 0; i < 50; ++i) {
    e.OnFirstToken(2, 0.02, /*alone=*/true);  // 2 tokens in 20 ms: the step and the hop
  }
  EXPECT_NEAR(e.PrefillRate(), 4000, kTol) << "not 100 tokens/s";
  e.OnFirstToken(256, 0.064, /*alone=*/true);
  EXPECT_NEAR(e.PrefillRate(), 4000, kTol);
}

TEST(EndpointStateTest, PredictedTtftIsTheWaitAheadPlusThePrefill) {
  EndpointState e("a", true, Priors());
  e.OnScrape({.num_waiting = 6, .num_running = 4, .kv_usage = 0.9}, 0.0);
  // 6 ahead at 10 req/s = 0.6 s, plus 400 tokens at 4000 tokens/s = 0.1 s.
  EXPECT_NEAR(e.PredictTtft(400, true), 0.7, kTol);
  e.OnScrape({.num_waiting = 0, .num_running = 1, .kv_usage = 0.1}, 1.0);
  EXPECT_NEAR(e.PredictTtft(400, true), 0.1, kTol) << "nothing ahead: prefill only";
}

TEST(EndpointStateTest, ASpillwayEnginesForecastIsTheWaitMovedBySendsSince) {
  EndpointState e("a", true, Priors());
  // The engine forecasts 0.25 s of wait where the counts (6 ahead at 10 req/s) say 0.6 s.
  e.OnScrape({.num_waiting = 6, .num_running = 4, .kv_usage = 0.9, .queue_forecast_s = 0.25}, 0.0);
  EXPECT_NEAR(e.PredictTtft(400, true), 0.25 + 0.1, kTol);
  e.OnForward(0.1);
  e.OnForward(0.1);
  EXPECT_NEAR(e.PredictTtft(400, true), 0.25 + 0.2 + 0.1, kTol) << "two more ahead, over mu";
  EXPECT_NEAR(e.PredictTtft(400, true, /*priority=*/1), 0.8 + 0.1, kTol)
      << "a less urgent request is predicted from the counts";
  EXPECT_NEAR(e.PredictTtft(400, false), 0.1, kTol)
      << "stale: the gateway's own in-flight count (2) within the batch";
  e.OnScrape({.num_waiting = 0, .num_running = 1, .kv_usage = 0.1, .queue_forecast_s = 0}, 1.0);
  for (int i = 0; i < 3; ++i) {
    e.OnFinish(1.1, true);
  }
  EXPECT_NEAR(e.PredictTtft(400, true), 0.1, kTol) << "never below no wait";
}

TEST(EndpointStateTest, WithoutMetricsTheBatchIsTheOneGivenAndAReloadCanChangeIt) {
  EndpointState hosted("a", /*exports_metrics=*/false,
                       {.service_rate_rps = 10, .prefill_tokens_per_s = 4000, .max_running = 200});
  EndpointState assumed("b", false, EndpointPriors{});
  for (int i = 0; i < 100; ++i) {
    hosted.OnForward(0.0);
    assumed.OnForward(0.0);
  }
  EXPECT_NEAR(hosted.PredictTtft(400, false), 0.1, kTol) << "100 in flight fit a batch of 200";
  // The default batch of 16: 84 ahead at 10 requests/s, plus the prefill.
  EXPECT_NEAR(assumed.PredictTtft(400, false), 8.4 + 0.1, kTol);
  assumed.set_priors({.service_rate_rps = 10, .prefill_tokens_per_s = 4000, .max_running = 200});
  EXPECT_NEAR(assumed.PredictTtft(400, false), 0.1, kTol);
  EXPECT_EQ(assumed.in_flight(), 100) << "what it counted stays";
}

}  // namespace
}  // namespace spillway::routing
