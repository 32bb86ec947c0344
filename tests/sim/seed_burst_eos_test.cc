// The reference burst with realistic max_tokens (scenarios/seed-burst-eos.yaml): clients send a
// cap of 256 and the model stops at the lesson's lengths, which admission never sees. It must
// learn them from completions and serve the burst as well as when the lengths are exact
// (seed-burst.yaml, ignore_eos), instead of planning every request at its cap (issue 14).

#include <gtest/gtest.h>

#include "sim_fixture.h"

namespace spillway {
namespace {

using simtest::RepoPath;
using simtest::RunSim;

constexpr std::size_t kEosBurstPhase = 1;

TEST(SeedBurstEosTest, TheHiddenLengthsGenerateTheSameWorkAsExactOnes) {
  const Scenario exact = LoadScenario(RepoPath("scenarios/seed-burst.yaml"));
  const Scenario eos = LoadScenario(RepoPath("scenarios/seed-burst-eos.yaml"));
  const RunSummary a = RunSim(exact, AdmissionPolicy::kUnbounded);
  const RunSummary b = RunSim(eos, AdmissionPolicy::kUnbounded);
  EXPECT_EQ(a.good, b.good);
  EXPECT_DOUBLE_EQ(a.engine_busy_s.value(), b.engine_busy_s.value());
}

TEST(SeedBurstEosTest, PredictiveLearnsTheLengthsAndServesTheBurstAsWithExactOnes) {
  const Scenario exact = LoadScenario(RepoPath("scenarios/seed-burst.yaml"));
  const Scenario eos = LoadScenario(RepoPath("scenarios/seed-burst-eos.yaml"));
  const RunSummary a = RunSim(exact, AdmissionPolicy::kPredictive);
  const RunSummary b = RunSim(eos, AdmissionPolicy::kPredictive);
  // Planned at its 256 cap, every request would be refused (400 or 429 deadline_unreachable:
  // 256 decode steps of a full batch take about 8 s against a 4.5 s deadline).
  EXPECT_EQ(b.rejected_by_status.count("400"), 0u);
  EXPECT_GE(b.phases[kEosBurstPhase].goodput_rps, 0.95 * a.phases[kEosBurstPhase].goodput_rps);
  EXPECT_GE(b.good, static_cast<std::int64_t>(0.95 * static_cast<double>(a.good)));
  EXPECT_EQ(b.failed, 0);  // no 504 after admission
}

}  // namespace
}  // namespace spillway
