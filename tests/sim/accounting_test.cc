// Every request the simulator offers ends exactly once, and the summary's counts add up.

#include <gtest/gtest.h>

#include "report/summary_json.h"
#include "sim_fixture.h"

namespace spillway {
namespace {

using simtest::RepoPath;
using simtest::RunSim;

std::int64_t Reason(const RunSummary& s, const std::string& reason) {
  const auto it = s.rejected_by_reason.find(reason);
  return it == s.rejected_by_reason.end() ? 0 : it->second;
}

class AccountingTest : public ::testing::TestWithParam<AdmissionPolicy> {};

TEST_P(AccountingTest, EveryOfferedRequestEndsExactlyOnce) {
  const Scenario sc = LoadScenario(RepoPath("scenarios/seed-burst.yaml"));
  const RunSummary s = RunSim(sc, GetParam());
  const std::int64_t dropped_at_head = s.dropped_at_queue_head;
  EXPECT_EQ(Reason(s, "queue_deadline_exceeded"), 0);  // drops are not door refusals
  // Refused at the door + admitted == offered.
  EXPECT_EQ(s.offered, s.admitted + s.rejected_total);
  // Each admitted request completes, is abandoned, fails or is dropped at the queue head.
  EXPECT_EQ(s.admitted, s.completed + s.abandoned_after_admission + s.failed + dropped_at_head);
  EXPECT_LE(s.good, s.completed);
  std::int64_t offered = 0;
  std::int64_t good = 0;
  for (const TimeseriesPoint& p : s.timeseries) {
    offered += p.offered;
    good += p.good;
  }
  EXPECT_EQ(offered, s.offered);
  EXPECT_EQ(good, s.good);
  EXPECT_DOUBLE_EQ(s.goodput_rps, s.good / s.duration_s);
}

INSTANTIATE_TEST_SUITE_P(Policies, AccountingTest,
                         ::testing::Values(AdmissionPolicy::kUnbounded, AdmissionPolicy::kTailDrop,
                                           AdmissionPolicy::kPredictive),
                         [](const ::testing::TestParamInfo<AdmissionPolicy>& info) {
                           std::string name(ToString(info.param));
                           std::erase(name, '-');
                           return name;
                         });

TEST(DeterminismTest, SameSeedGivesIdenticalSummary) {
  const Scenario sc = LoadScenario(RepoPath("scenarios/seed-burst.yaml"));
  EXPECT_EQ(SummaryToJson(RunSim(sc, AdmissionPolicy::kPredictive, {}, 7)),
            SummaryToJson(RunSim(sc, AdmissionPolicy::kPredictive, {}, 7)));
}

TEST(DeterminismTest, DifferentSeedGivesDifferentArrivals) {
  const Scenario sc = LoadScenario(RepoPath("scenarios/seed-burst.yaml"));
  EXPECT_NE(RunSim(sc, AdmissionPolicy::kPredictive, {}, 1).offered,
            RunSim(sc, AdmissionPolicy::kPredictive, {}, 2).offered);
}

TEST(ReplicasTest, ThreeReplicasAbsorbTheBurst) {
  const Scenario sc = LoadScenario(RepoPath("scenarios/seed-burst.yaml"));
  SimOptions opt;
  opt.replicas = 3;
  const RunSummary s = Simulate(sc, simtest::Resolve(sc, AdmissionPolicy::kPredictive), opt);
  EXPECT_EQ(s.replicas, 3);
  EXPECT_GT(static_cast<double>(s.good), 0.95 * static_cast<double>(s.offered));
}

}  // namespace
}  // namespace spillway
