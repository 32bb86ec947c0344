// Failure injection in virtual time (issue: the overload acceptance suite), scenarios 1 and 3:
// scenarios/failure/ramp.yaml (0.5x to 3x capacity) and scenarios/failure/retry-storm-*.yaml
// (fixed 100 ms retries vs Retry-After backoff with jitter and a budget), under predictive
// admission on the emulated seed-a100-7b engine.

#include <gtest/gtest.h>

#include "sim/capacity.h"
#include "sim_fixture.h"

namespace spillway {
namespace {

using simtest::RepoPath;
using simtest::Resolve;
using simtest::RunSim;

TEST(FailureRampTest, GoodputHoldsTtftStaysInSloAndSheddingRisesWithLoad) {
  const Scenario sc = LoadScenario(RepoPath("scenarios/failure/ramp.yaml"));
  const double mu_rps =
      MeasureCapacity(sc, Resolve(sc, AdmissionPolicy::kUnbounded), CapacityOptions{}).mu_rps;
  const RunSummary s = RunSim(sc, AdmissionPolicy::kPredictive);
  ASSERT_EQ(s.phases.size(), 6u);
  double last_shed = 0;
  for (const PhaseSummary& p : s.phases) {
    SCOPED_TRACE(testing::Message()
                 << "step at " << p.offered_rate_rps << " req/s (mu " << mu_rps << ")");
    // Once offered load exceeds capacity, goodput stays >= 90% of capacity.
    if (p.offered_rate_rps > mu_rps) {
      EXPECT_GE(p.goodput_rps, 0.9 * mu_rps);
    }
    // p95 TTFT of admitted requests within the 1 s SLO at every step.
    EXPECT_LE(p.ttft_s.p95, 1.0);
    // Shed (refused + dropped at the head) rises with load and never falls by more than noise.
    const double shed = static_cast<double>(p.rejected + p.dropped) / p.offered;
    EXPECT_GE(shed, last_shed - 0.02);
    EXPECT_LE(shed - last_shed, 0.35) << "a jump, not a smooth rise";
    last_shed = shed;
  }
  EXPECT_GT(last_shed, 0.5);  // at 3x capacity most requests are shed
}

TEST(FailureRetryStormTest, FixedRetriesAmplifyLoadBackoffWithBudgetDoesNot) {
  const RunSummary fixed =
      RunSim(LoadScenario(RepoPath("scenarios/failure/retry-storm-fixed.yaml")),
             AdmissionPolicy::kPredictive);
  const RunSummary backoff =
      RunSim(LoadScenario(RepoPath("scenarios/failure/retry-storm-backoff.yaml")),
             AdmissionPolicy::kPredictive);
  ASSERT_EQ(fixed.first_attempts, backoff.first_attempts);  // the same clients
  const double fixed_amplification = static_cast<double>(fixed.offered) / fixed.first_attempts;
  const double backoff_amplification =
      static_cast<double>(backoff.offered) / backoff.first_attempts;
  EXPECT_GT(fixed_amplification, 3.0) << "the fixed-interval storm";
  EXPECT_LT(backoff_amplification, 1.5);
  // Both recover: once the burst ends, goodput returns to the offered 8 req/s (within 10%)
  // and the queue is back to empty by the end.
  for (const RunSummary* s : {&fixed, &backoff}) {
    ASSERT_EQ(s->phases.size(), 3u);
    EXPECT_GE(s->phases[2].goodput_rps, 0.9 * 8.0) << s->scenario;
    ASSERT_FALSE(s->timeseries.empty());
    EXPECT_EQ(s->timeseries.back().waiting, 0) << s->scenario;
  }
  // The storm's cost: the fixed policy sheds several times more attempts for the same goodput.
  EXPECT_GT(fixed.rejected_total, 5 * backoff.rejected_total);
}

}  // namespace
}  // namespace spillway
