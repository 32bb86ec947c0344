#pragma once
// Resolves what one run uses: the scenario's engine and admission sections, command-line
// overrides on top (flags win), then defaults. Validated once; immutable afterwards.

#include <cstdint>
#include <optional>
#include <string>

#include "admission/admission.h"
#include "engine/engine_config.h"
#include "executor/profile.h"
#include "sched/scheduler.h"
#include "sched/slo_budget.h"
#include "workload/scenario.h"

namespace spillway {

/// Command-line overrides; unset fields keep the scenario's value or the default.
struct RunOverrides {
  std::optional<std::string> profile;
  std::optional<std::int32_t> max_num_seqs;
  std::optional<std::int32_t> max_num_batched_tokens;
  std::optional<bool> slo_budgets;
  std::optional<bool> propagate_cancellation;
  std::optional<std::int32_t> max_num_queued_reqs;
  std::optional<std::int64_t> max_num_queued_tokens;
};

/// A simulated run's engine configuration (every replica gets the same).
using RunConfig = EngineConfig;

/// Resolves the run. `mean_context_tokens` sizes SLO budgets when the scenario does not (the
/// mean of prompt + output / 2 over the run's arrivals). Throws config::ConfigError on an
/// unknown profile or an invalid combination (e.g. predictive without a TTFT SLO).
RunConfig ResolveRunConfig(const Scenario& scenario, AdmissionPolicy policy,
                           const std::string& profile_dir, const RunOverrides& overrides,
                           double mean_context_tokens);

}  // namespace spillway
