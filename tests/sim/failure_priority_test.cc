// Failure injection in virtual time, scenario 4: scenarios/failure/priority-skew.yaml (90%
// batch / 10% interactive, then reversed, at 1.5x capacity, priority scheduling with aging).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "report/attempt_record.h"
#include "sim_fixture.h"

namespace spillway {
namespace {

using simtest::RepoPath;
using simtest::Resolve;
using simtest::RunSim;

TEST(FailurePriorityTest, InteractiveMeetsItsSloAndBatchIsServedWithinTheAgingBound) {
  const Scenario sc = LoadScenario(RepoPath("scenarios/failure/priority-skew.yaml"));
  const RunSummary s = RunSim(sc, AdmissionPolicy::kPredictive);
  const ClassSummary& interactive = s.classes.at("interactive");
  const ClassSummary& batch = s.classes.at("batch");
  EXPECT_LE(interactive.ttft_s.p95, 1.0);
  // Batch is not starved: a good part of it is served, and no served batch request waited
  // longer than the aging bound (10 s per class) plus the SLO.
  EXPECT_GT(batch.completed, batch.offered / 3);
  EXPECT_LE(batch.ttft_s.max, 10.0 + 1.0);
  // Shedding falls on the lower class first.
  const double batch_shed = static_cast<double>(batch.rejected + batch.dropped) / batch.offered;
  const double interactive_shed =
      static_cast<double>(interactive.rejected + interactive.dropped) / interactive.offered;
  EXPECT_LT(interactive_shed, batch_shed);
}

TEST(FailurePriorityTest, TheForecastPlansForTheOvertakersAndKeepsItsPromiseToTheBatchClass) {
  // Issue 14's goal: at most 1% of the admitted requests dropped at the queue head or late for
  // their TTFT SLO. Here the misses are batch requests overtaken by interactive ones that
  // arrived after them: planned for at the mean count of those arrivals, 2.1% to 3.5% of the
  // admitted (seeds 1 to 4); at about its 99th percentile, 0.3% to 0.8% (seeds 1 to 5).
  const Scenario sc = LoadScenario(RepoPath("scenarios/failure/priority-skew.yaml"));
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    std::int64_t late = 0;
    SimOptions opt;
    opt.seed = seed;
    opt.on_record = [&late](const AttemptRecord& r) {
      late += std::isfinite(r.first_token_s) && r.first_token_s - r.sent_s > 1.0 ? 1 : 0;
    };
    const RunSummary forecast = Simulate(sc, Resolve(sc, AdmissionPolicy::kForecast), opt);
    const RunSummary predictive = RunSim(sc, AdmissionPolicy::kPredictive, {}, seed);
    ASSERT_GT(forecast.admitted, 800) << "seed " << seed;
    EXPECT_LE(forecast.dropped_at_queue_head + late, forecast.admitted / 100) << "seed " << seed;
    EXPECT_GE(forecast.goodput_rps, 0.99 * predictive.goodput_rps) << "seed " << seed;
  }
}

}  // namespace
}  // namespace spillway
