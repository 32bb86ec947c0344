// Property test: random scenarios, engines and policies run under the invariant checkers
// (KV blocks conserved, each live request waiting or running, counters consistent) after every
// step, and every admitted request ends exactly once. A failure names the seed.

#include <gtest/gtest.h>

#include "core/rng.h"
#include "sim_fixture.h"

namespace spillway {
namespace {

Scenario RandomScenario(Rng& rng) {
  Scenario sc;
  sc.name = "random";
  sc.file = "<random>";
  sc.arrival.kind = ArrivalProcess::Kind::kSteps;
  const int steps = static_cast<int>(rng.UniformInt(1, 3));
  for (int i = 0; i < steps; ++i) {
    sc.arrival.steps.push_back({rng.Uniform(1, 40), rng.Uniform(2, 10), {}});
  }
  const int classes = static_cast<int>(rng.UniformInt(1, 3));
  for (int i = 0; i < classes; ++i) {
    RequestClass c;
    c.name = "c" + std::to_string(i);
    c.share = rng.Uniform(0.1, 1);
    c.prompt_tokens.kind = TokenDist::Kind::kUniform;
    c.prompt_tokens.min = 1;
    c.prompt_tokens.max = static_cast<std::int32_t>(rng.UniformInt(1, 900));
    c.output_tokens.kind = TokenDist::Kind::kUniform;
    c.output_tokens.min = 1;
    c.output_tokens.max = static_cast<std::int32_t>(rng.UniformInt(1, 200));
    c.priority = static_cast<std::int32_t>(rng.UniformInt(0, 2));
    sc.classes.push_back(c);
  }
  sc.client.ttft_timeout_s = rng.Uniform(0.2, 3);
  sc.client.total_timeout_s = sc.client.ttft_timeout_s + rng.Uniform(0, 10);
  const auto retry = rng.UniformInt(0, 2);
  sc.client.retry = static_cast<RetryPolicy>(retry);
  sc.client.max_attempts = static_cast<std::int32_t>(rng.UniformInt(1, 4));
  sc.client.retry_budget = rng.Uniform() < 0.5 ? 0.0 : 0.2;
  sc.slo.ttft_s = 1.0;
  sc.slo.tpot_s = 0.05;
  sc.settings.num_gpu_blocks = static_cast<std::int32_t>(rng.UniformInt(60, 400));  // preempts
  sc.settings.max_num_seqs = static_cast<std::int32_t>(rng.UniformInt(1, 64));
  sc.settings.max_num_batched_tokens = static_cast<std::int32_t>(rng.UniformInt(16, 1024));
  sc.settings.enable_chunked_prefill = rng.Uniform() < 0.8;
  if (!*sc.settings.enable_chunked_prefill) {
    sc.settings.max_num_batched_tokens = 4096;  // a whole prompt must fit a step (max_model_len)
  }
  sc.settings.scheduling = rng.Uniform() < 0.5 ? "fcfs" : "priority";
  sc.settings.max_preemptions = static_cast<std::int32_t>(rng.UniformInt(0, 3));
  sc.settings.propagate_cancellation = rng.Uniform() < 0.7;
  sc.settings.slo_budgets = false;
  return sc;
}

TEST(SimPropertyTest, RandomRunsKeepEveryInvariant) {
  std::int64_t preemptions = 0;
  std::int64_t failed = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    Rng rng(seed);
    Scenario sc = RandomScenario(rng);
    // Prompts and outputs may exceed the pool and the budget: such requests must fail, not
    // wedge the queue (the server refuses prompts over max_model_len before that).
    const auto policy = static_cast<AdmissionPolicy>(rng.UniformInt(0, 2));
    SimOptions opt;
    opt.seed = seed;
    opt.replicas = static_cast<std::int32_t>(rng.UniformInt(1, 3));
    RunSummary s;
    ASSERT_NO_THROW(s = Simulate(sc, simtest::Resolve(sc, policy), opt)) << "seed " << seed;
    const auto dropped = s.dropped_at_queue_head;
    EXPECT_EQ(s.admitted, s.completed + s.abandoned_after_admission + s.failed + dropped)
        << "seed " << seed;
    EXPECT_EQ(s.offered, s.first_attempts + s.retries) << "seed " << seed;
    EXPECT_EQ(s.offered, s.admitted + s.rejected_total) << "seed " << seed;
    preemptions += s.preemptions;
    failed += s.failed;
  }
  // The random pools are small enough that the runs exercise preemption and its cap.
  EXPECT_GT(preemptions, 0);
  EXPECT_GT(failed, 0);
}

}  // namespace
}  // namespace spillway
