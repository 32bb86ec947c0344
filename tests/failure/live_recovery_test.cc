// Failure injection 6 (recovery), live: bench against `spillway serve` (predictive, the
// defaults; live_failure_fixture.h). scenarios/failure/recovery.yaml at 0.3 of its length: 6 s
// at 8 req/s, 18 s at 33 req/s (3x capacity), 12 s at 8 req/s.
//
// Pass, as in the simulator's test (tests/sim/failure_cancel_recovery_test.cc):
// 1. The waiting queue is back to its pre-burst depth within 5 s of the burst's end and stays
//    there. The depth is the server's vllm:num_requests_waiting, scraped by bench at the end of
//    every second (the summary's time series, which --timeseries writes). The bound: predictive
//    admission keeps about mu x TTFT SLO (~11) requests waiting, each of which starts or is
//    dropped at the queue head within the TTFT SLO (1 s); after the burst the offered load is
//    8 req/s plus the burst's backoff retries, at most 20% more by the retry budget (9.6 req/s,
//    under mu = 10.34), so nothing rebuilds the queue: 1 s to drain, 1 s for the once-a-second
//    scrape, 3 s for a loaded 2-core machine. (The simulator allows 10 s: there the burst's
//    retries keep its queue up for 6 s after the burst; live they did not.)
//    Loosened from the simulator's base depth + 1 to + 2: a scrape is one instant, and the short
//    version has 6 pre-burst samples to set the base (the simulator has 20).
// 2. Retry-After is never below the true drain time by more than 1 s, for every 429/503 with a
//    Retry-After (not rate_limited, not draining): the summary's retry_after check. The drain
//    time is estimated from the records (loadgen/bench_recorder.h QueueSpanOf): a request left
//    the queue at its first token (late by its prefill, so drain times come out long and the
//    check errs on the strict side) or at its end when it got none (a drop at the queue head,
//    which a stream signals without a Retry-After, so drops are not themselves checked live).
// 3. Once the queue is back, the base load is served: 95% of the attempts sent from the bound
//    on complete (the simulator asks for 90% goodput; see below why not goodput live).
//
// Measured (22 runs of the short version, 12 of them with two to four busy loops competing
// for the 2 cores): the queue back to base + 2 at the first or third sample after the burst (0
// to 2 s), to the base itself within 3 s; 413 to 499 answers checked, none short, worst
// shortfall -0.05 to +0.27 s (the longest drain about 1.0 s, 1.27 s under the busy loops: the
// predictive queue deadline bounds every wait by the 1 s TTFT SLO); mean prefill, the drain
// estimate's error, 28 to 41 ms. Full length (SPILLWAY_FAILURE_SCALE=3.34): back in 2 s (3 s to the
// base), 1395 checked, none short, worst shortfall -0.004 s.

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

#include "common/http_client.h"
#include "common/server_fixture.h"
#include "failure/live_failure_fixture.h"

namespace spillway::failure_test {
namespace {

using server_test::MetricSum;
using server_test::ModelLabel;

/// Seconds after the burst's end by which the waiting queue is back to its base depth.
constexpr double kRecoveryBound_s = 5.0;
/// Requests over the pre-burst depth still counted as back to it (one scrape is an instant).
constexpr std::int32_t kDepthSlack = 2;

class LiveRecoveryTest : public LiveFailureTest {};

/// The deepest waiting queue sampled at the end of seconds [from_s, to_s).
std::int32_t MaxWaiting(const RunSummary& s, double from_s, double to_s) {
  std::int32_t depth = 0;
  for (const TimeseriesPoint& p : s.timeseries) {
    if (p.t >= from_s && p.t < to_s) {
      depth = std::max(depth, p.waiting);
    }
  }
  return depth;
}

/// When the waiting queue was back to `depth` for good within [from_s, to_s): the first sample
/// after the last one above it (point t is sampled at t + 1), or from_s when none was above.
double BackToDepth(const RunSummary& s, double from_s, double to_s, std::int32_t depth) {
  double back_s = from_s;
  for (const TimeseriesPoint& p : s.timeseries) {
    if (p.t >= from_s && p.t < to_s && p.waiting > depth) {
      back_s = p.t + 2;
    }
  }
  return back_s;
}

/// The share of the attempts sent in [from_s, to_s) that completed (0 when none was sent).
double CompletedShare(const LiveRun& run, double from_s, double to_s) {
  int sent = 0;
  int completed = 0;
  for (const json::object& r : run.records) {
    const double sent_s = r.at("sent_s").to_number<double>();
    if (sent_s >= from_s && sent_s < to_s) {
      ++sent;
      completed += r.at("outcome").as_string() == "completed" ? 1 : 0;
    }
  }
  return sent > 0 ? static_cast<double>(completed) / sent : 0;
}

TEST_F(LiveRecoveryTest, QueueBackToItsBaseDepthAndRetryAfterNeverShortOfTheDrainTime) {
  const LiveRun run = Bench(Shortened("recovery", 0.3));
  const RunSummary& s = run.result.summary;
  ASSERT_EQ(s.phases.size(), 3u);
  ASSERT_TRUE(run.result.metrics_scraped);
  EXPECT_EQ(run.result.transport_errors, 0);
  const double burst_start_s = s.phases[0].end_s;
  const double burst_end_s = s.phases[1].end_s;
  const double end_s = s.phases[2].end_s;

  // 1. The queue: built by the burst, back to the base depth within the bound, and it stays.
  const std::int32_t base = MaxWaiting(s, 0, burst_start_s);
  const std::int32_t burst = MaxWaiting(s, burst_start_s, burst_end_s);
  EXPECT_GT(burst, base + 5) << "the burst did build a queue";
  const double back_s = BackToDepth(s, burst_end_s, end_s, base + kDepthSlack) - burst_end_s;
  const double back_exact_s = BackToDepth(s, burst_end_s, end_s, base) - burst_end_s;
  EXPECT_LE(back_s, kRecoveryBound_s) << "waiting: base " << base << ", burst max " << burst;
  // Once the queue is back, the base load is served again: 95% of the attempts sent from the
  // bound on complete. Completions, not the simulator's goodput: on a loaded 2-core machine
  // the 35 ms TPOT SLO slips for the machine's reasons (measured with busy loops beside the
  // test: goodput 4.3 to 7.1 of 8 req/s after the burst, while every attempt sent from the
  // bound on completed and the queue and Retry-After criteria held).
  const double after_completed = CompletedShare(run, burst_end_s, end_s);
  const double recovered_completed = CompletedShare(run, burst_end_s + kRecoveryBound_s, end_s);
  EXPECT_GE(recovered_completed, 0.95);

  // 2. Retry-After against the drain time: every refusal at the door carries one.
  const RetryAfterSummary& ra = s.retry_after;
  EXPECT_EQ(ra.checked, s.rejected_total);
  EXPECT_GT(ra.checked, 100);
  EXPECT_EQ(ra.shortfalls, 0);
  EXPECT_LE(ra.max_shortfall_s, ra.tolerance_s);

  // The estimate's error: the prefill time by which a first token trails the queue exit.
  const std::string metrics = Metrics();
  const double prefills =
      MetricSum(metrics, "vllm:request_prefill_time_seconds_count", ModelLabel());
  const double prefill_mean_s =
      prefills > 0
          ? MetricSum(metrics, "vllm:request_prefill_time_seconds_sum", ModelLabel()) / prefills
          : 0;
  std::cout << "recovery: waiting base " << base << ", burst max " << burst << "; back to "
            << base + kDepthSlack << " " << back_s << " s and to " << base << " " << back_exact_s
            << " s after the burst; completed after the burst " << after_completed * 100
            << "%, from the bound on " << recovered_completed * 100 << "%, goodput "
            << s.phases[2].goodput_rps << " req/s; Retry-After: " << ra.checked << " checked, "
            << ra.shortfalls << " short by > 1 s, worst shortfall " << ra.max_shortfall_s
            << " s, longest drain " << ra.max_drain_s << " s, mean drain " << ra.mean_drain_s
            << " s, mean Retry-After " << ra.mean_retry_after_s
            << " s; mean prefill (drain overestimate) " << prefill_mean_s << " s\n";
}

}  // namespace
}  // namespace spillway::failure_test
