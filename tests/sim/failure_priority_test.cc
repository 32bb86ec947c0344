// Failure injection in virtual time, scenario 4: scenarios/failure/priority-skew.yaml (90%
// batch / 10% interactive, then reversed, at 1.5x capacity, priority scheduling with aging).

#include <gtest/gtest.h>

#include "sim_fixture.h"

namespace spillway {
namespace {

using simtest::RepoPath;
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

}  // namespace
}  // namespace spillway
