// Cost of one admission decision (token bucket + predictive policy). Target: under 1 us.

#include <benchmark/benchmark.h>

#include "admission/admission.h"

namespace spillway {
namespace {

void BM_AdmissionDecide(benchmark::State& state) {
  AdmissionConfig config;
  config.policy = AdmissionPolicy::kPredictive;
  config.tenants["acme"] = TenantLimit{1e9, 1e9};
  config.estimator.prefill_tokens_per_s_prior = 5000;
  config.estimator.step_time_prior_s = 0.03;
  AdmissionController controller(config, 0);
  EngineStats stats;
  stats.num_waiting = 5;
  stats.num_running = 40;
  stats.max_num_seqs = 42;
  stats.waiting_prompt_tokens = 600;
  stats.prefill_backlog_tokens = 700;
  stats.kv_usage = 0.5;
  const AdmissionRequest request{"acme", 128, 128};
  Seconds now = 0;
  for (auto _ : state) {
    now += 1e-6;
    benchmark::DoNotOptimize(controller.Decide(request, stats, now));
  }
}
BENCHMARK(BM_AdmissionDecide);

}  // namespace
}  // namespace spillway
