// Failure injection in virtual time, scenario 2: scenarios/failure/long-prompt-burst.yaml, a
// burst of maximum-length prompts into steady short traffic on a tight KV pool, against the
// same traffic without the long prompts.

#include <gtest/gtest.h>

#include "sim_fixture.h"

namespace spillway {
namespace {

using simtest::RepoPath;
using simtest::RunSim;

TEST(FailureLongPromptTest, ShortRequestsKeepTheirTtftAndRecomputeStaysSmall) {
  const Scenario sc = LoadScenario(RepoPath("scenarios/failure/long-prompt-burst.yaml"));
  Scenario baseline = sc;  // the same short traffic, no long prompts
  ASSERT_EQ(baseline.arrival.steps.size(), 3u);
  baseline.arrival.steps[1].rate_rps = 6;
  baseline.arrival.steps[1].mix = {1.0, 0.0};

  const RunSummary burst = RunSim(sc, AdmissionPolicy::kUnbounded);
  const RunSummary base = RunSim(baseline, AdmissionPolicy::kUnbounded);
  ASSERT_TRUE(burst.classes.count("long"));
  EXPECT_EQ(burst.classes.at("long").completed, burst.classes.at("long").offered);
  const double short_p99 = burst.classes.at("short").ttft_s.p99;
  const double base_p99 = base.classes.at("short").ttft_s.p99;
  EXPECT_LE(short_p99, 2.0 * base_p99)
      << "short p99 TTFT " << short_p99 << " s vs " << base_p99 << " s without the burst";
  // A long prompt starts only when its whole prefill fits (SchedulerConfig::
  // reserve_prefill_blocks): the tight pool, which preempted 20 times without that, does not
  // preempt; recomputation stays a small share of all prefill in any case.
  EXPECT_EQ(burst.preemptions, 0);
  EXPECT_LT(static_cast<double>(burst.recomputed_tokens), 0.25 * burst.prefill_tokens);
  // Nothing exceeded the preemption cap silently: a request over it fails (none here).
  EXPECT_EQ(burst.failed, 0);
}

TEST(FailureLongPromptTest, WithoutTheLongPrefillCapShortRequestsQueueBehindLongPrompts) {
  Scenario sc = LoadScenario(RepoPath("scenarios/failure/long-prompt-burst.yaml"));
  sc.settings.long_prefill_token_threshold = 0;
  Scenario baseline = sc;
  baseline.arrival.steps[1].rate_rps = 6;
  baseline.arrival.steps[1].mix = {1.0, 0.0};
  const RunSummary burst = RunSim(sc, AdmissionPolicy::kUnbounded);
  const RunSummary base = RunSim(baseline, AdmissionPolicy::kUnbounded);
  EXPECT_GT(burst.classes.at("short").ttft_s.p99, 4.0 * base.classes.at("short").ttft_s.p99);
}

}  // namespace
}  // namespace spillway
