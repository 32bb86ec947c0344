// The phases a run is reported over (report/scenario_recording.h), also when the load
// generator cuts the schedule with --duration-limit-s.

#include "report/scenario_recording.h"

#include <vector>

#include <gtest/gtest.h>

#include "workload/scenario.h"

namespace spillway {
namespace {

Scenario Steps() {
  Scenario sc;
  sc.arrival.kind = ArrivalProcess::Kind::kSteps;
  sc.arrival.steps = {{8, 30, {}}, {30, 60, {}}, {8, 60, {}}};
  return sc;
}

TEST(PhasesOfTest, OnePhasePerStep) {
  const std::vector<RunRecorder::Phase> p = PhasesOf(Steps());
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[1].start_s, 30);
  EXPECT_EQ(p[1].end_s, 90);
  EXPECT_EQ(p[1].rate_rps, 30);
  EXPECT_EQ(p[2].end_s, 150);
}

TEST(PhasesOfTest, CutAtTheDurationLimit) {
  const std::vector<RunRecorder::Phase> p = PhasesOf(Steps(), 45);
  ASSERT_EQ(p.size(), 2u);  // the third step would start at 90 s
  EXPECT_EQ(p[0].end_s, 30);
  EXPECT_EQ(p[1].start_s, 30);
  EXPECT_EQ(p[1].end_s, 45);
  EXPECT_EQ(PhasesOf(Steps(), 30).size(), 1u);  // a phase starting at the limit is left out
  EXPECT_EQ(PhasesOf(Steps(), 1000).size(), 3u);
}

TEST(PhasesOfTest, PoissonCutToo) {
  Scenario sc;
  sc.arrival.kind = ArrivalProcess::Kind::kPoisson;
  sc.arrival.rate_rps = 111;
  sc.arrival.duration_s = 600;
  const std::vector<RunRecorder::Phase> p = PhasesOf(sc, 20);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].start_s, 0);
  EXPECT_EQ(p[0].end_s, 20);
  EXPECT_EQ(p[0].rate_rps, 111);
}

}  // namespace
}  // namespace spillway
