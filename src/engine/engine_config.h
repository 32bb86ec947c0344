#pragma once
// What one engine runs with, fully resolved: the profile, the scheduler's budgets, the KV pool,
// admission (with its estimator priors and the request deadline) and cancellation. Built once
// (by the simulator's and the server's resolvers) and immutable afterwards.

#include <cstdint>
#include <optional>

#include "admission/admission.h"
#include "config/profile.h"
#include "sched/scheduler.h"
#include "sched/slo_budget.h"

namespace spillway {

struct EngineConfig {
  Profile profile;
  SchedulerConfig scheduler;
  std::int32_t num_gpu_blocks = 0;  ///< KV blocks of profile.block_size tokens
  /// Longest prompt + output, tokens (the profile's unless configured); longer requests are
  /// refused at the door with 400 context_length_exceeded.
  std::int32_t max_model_len = 0;
  AdmissionConfig admission;
  /// Client disconnects abort the request at the next iteration (off: the engine keeps
  /// generating for clients that left, the naive baseline).
  bool propagate_cancellation = true;
  /// Automatic prefix caching in the KV pool (kv/block_manager.h); vLLM's is on by default.
  bool enable_prefix_caching = false;
  /// The TPOT SLO, seconds: with admission.ttft_slo_s, what a request completed within its
  /// SLOs means (the server's goodput counter; the batch budgets when derived).
  Seconds tpot_slo_s = 0.035;
  /// Set when the batch budgets were derived from the TPOT SLO (else explicit or defaults).
  std::optional<SloBudgets> slo_budgets;
};

}  // namespace spillway
