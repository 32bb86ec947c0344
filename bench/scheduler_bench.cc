// Cost of one scheduler iteration (Step + OnStepDone) with 256 running and 1,000 waiting
// sequences: the engine loop's own overhead per step. Target: under 20 microseconds.
// Each finished request is replaced by a new one, so the population stays constant and the
// steady state mixes decodes, prefills of new arrivals and finishes.

#include <benchmark/benchmark.h>

#include "kv/block_manager.h"
#include "sched/scheduler.h"

namespace spillway {
namespace {

void BM_SchedulerStep(benchmark::State& state) {
  const auto running = static_cast<std::int32_t>(state.range(0));
  const auto waiting = static_cast<std::int32_t>(state.range(1));
  BlockManager blocks(200000, 16);
  SchedulerConfig config;
  config.max_num_seqs = running;
  config.max_num_batched_tokens = 8192;
  Scheduler sched(config, &blocks);
  RequestId next_id = 0;
  auto submit = [&](Seconds t) {
    RequestSpec spec;
    spec.id = next_id++;
    spec.prompt_tokens = 128;
    spec.max_output_tokens = 64;
    spec.arrival_s = t;
    sched.Submit(spec);
  };
  for (std::int32_t i = 0; i < running + waiting; ++i) {
    submit(i * 1e-3);
  }
  StepEvents events;
  StepResult result;
  Seconds now = 10;
  // Fill the batch: prefill everything that fits.
  for (int i = 0; i < 64; ++i) {
    const StepPlan& plan = sched.Step(now, &events);
    result.token_ids.assign(plan.seqs.size(), 1);
    sched.OnStepDone(result, now, &events);
    for (std::size_t i = 0; i < events.finished.size(); ++i) {
      submit(now);
    }
    events.clear();
  }
  for (auto _ : state) {
    const StepPlan& plan = sched.Step(now, &events);
    result.token_ids.assign(plan.seqs.size(), 1);
    now += 0.03;
    sched.OnStepDone(result, now, &events);
    for (std::size_t i = 0; i < events.finished.size(); ++i) {
      submit(now);
    }
    events.clear();
    benchmark::DoNotOptimize(plan.num_tokens());
  }
  state.counters["running"] = sched.num_running();
  state.counters["waiting"] = sched.num_waiting();
}
BENCHMARK(BM_SchedulerStep)->Args({256, 1000});

}  // namespace
}  // namespace spillway

BENCHMARK_MAIN();
