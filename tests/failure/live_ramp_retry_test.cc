// Failure injection 1 (ramp) and 3 (retry storm), live: bench against `spillway serve`
// (live_failure_fixture.h).

#include <gtest/gtest.h>

#include "failure/live_failure_fixture.h"

namespace spillway::failure_test {
namespace {

// --- 1. Ramp -----------------------------------------------------------------------------------

class LiveRampTest : public LiveFailureTest {};

TEST_F(LiveRampTest, GoodputHoldsTtftStaysNearTheSloAndSheddingRisesWithLoad) {
  const LiveRun run = Bench(Shortened("ramp", 0.25));  // 5 s per step
  const RunSummary& s = run.result.summary;
  ASSERT_EQ(s.phases.size(), 6u);
  EXPECT_EQ(run.result.transport_errors, 0);
  double last_shed = 0;
  for (const PhaseSummary& p : s.phases) {
    SCOPED_TRACE(testing::Message() << "step at " << p.offered_rate_rps << " req/s");
    // Live: 80% of capacity (not 90%): 5 s steps hold ~70 to 200 requests, and the server's
    // 4.5 s deadline also refuses long requests under load (deadline_unreachable).
    if (p.offered_rate_rps > kCapacityRps) {
      EXPECT_GE(p.goodput_rps, 0.8 * kCapacityRps);
    }
    // Live: 10% over the 1 s SLO for timer jitter and HTTP set-up on a loaded machine. The
    // bound is the SLO the test is about, not a measurement with a margin: measured 0.85 to
    // 0.98 s in the overloaded steps, beside another live failure test (GTEST_TOTAL_SHARDS=2).
    EXPECT_LE(p.ttft_s.p95, 1.1);
    const double shed = static_cast<double>(p.rejected + p.dropped) / p.offered;
    EXPECT_GE(shed, last_shed - 0.05);
    last_shed = shed;
  }
  EXPECT_GT(last_shed, 0.4);
  // Issue 14's goal row, under the default policy (forecast): the admitted keep their promise
  // (full length, idle machine: 1 dropped at the head of 1,463 admitted, 0 late) and every
  // refusal is at the door (measured p99 1.7 ms of 830).
  ExpectPromisesKept(s);
  EXPECT_LT(RefusalP99(run), 0.050);
}

// --- 3. Retry storm ----------------------------------------------------------------------------

class LiveRetryStormTest : public LiveFailureTest {};

TEST_F(LiveRetryStormTest, FixedRetriesAmplifyLoadBackoffWithBudgetDoesNotAndBothRecover) {
  const LiveRun fixed = Bench(Shortened("retry-storm-fixed", 0.25));  // 5, 7.5, 10 s
  const LiveRun backoff = Bench(Shortened("retry-storm-backoff", 0.25));
  const RunSummary& f = fixed.result.summary;
  const RunSummary& b = backoff.result.summary;
  EXPECT_GT(static_cast<double>(f.offered) / f.first_attempts, 2.0) << "the storm";
  EXPECT_LT(static_cast<double>(b.offered) / b.first_attempts, 1.5);
  for (const RunSummary* s : {&f, &b}) {
    ASSERT_EQ(s->phases.size(), 3u);
    EXPECT_GE(s->phases[2].goodput_rps, 0.8 * 8.0) << "no recovery after the burst";
  }
}

}  // namespace
}  // namespace spillway::failure_test
