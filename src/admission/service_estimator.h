#pragma once
// Measures the engine's own service rate and prefill throughput from its completed steps, for
// predictive admission (W_est = Q / mu_hat; t_prefill = prompt / prefill throughput).
//
// Algorithm: steps are aggregated into windows of `window_s` seconds of engine time. When a
// window closes:
//   - service rate sample = completions in the window / engine-busy seconds in it (idle time
//     is not capacity). If the engine was
//     saturated (requests waiting, or the batch full) for at least half of the window's busy
//     time, the sample measures capacity: mu_hat <- alpha * sample + (1 - alpha) * mu_hat. An
//     unsaturated window only bounds capacity from below, so it may raise mu_hat but never
//     lower it: mu_hat <- max(mu_hat, alpha * sample + (1 - alpha) * mu_hat).
//   - prefill throughput sample = prefill tokens / seconds of the steps that also decoded
//     (chunked prefill beside running decodes is what a newly admitted request gets, and is far
//     slower than a prefill alone); same EWMA, updated when such steps ran. As for mu_hat, only
//     steps whose token budget was full measure it; steps that prefilled what little was
//     waiting (short prompts beside decodes: a few tokens in a decode-long step) only bound it
//     from below and may raise it, never lower it (from them alone it fell to ~120 tokens/s
//     and every long prompt was refused as never servable, for good).
//   - step time: EWMA over windows of the mean step duration.
// alpha = 1 - exp(-window_s / time_constant_s): an exponentially weighted moving average with
// the given time constant (default 5 s: reacts within a few seconds, ignores one odd window).
// Until a first measurement the priors given at construction are used (0 = unknown); the
// first saturated window replaces mu_hat outright (lower bounds from light load are not a
// measure of capacity).

#include <cstdint>

#include "core/types.h"

namespace spillway {

struct ServiceEstimatorConfig {
  Seconds window_s = 1.0;
  Seconds time_constant_s = 5.0;
  double service_rate_prior_rps = 0;      ///< 0 = unknown until measured
  double prefill_tokens_per_s_prior = 0;  ///< 0 = unknown until measured
  Seconds step_time_prior_s = 0;
};

/// One finished engine step, as the driver saw it.
struct StepSample {
  Seconds end_s = 0;  ///< when the step finished
  Seconds duration_s = 0;
  std::int32_t prefill_tokens = 0;
  std::int32_t decode_tokens = 0;
  std::int32_t completions = 0;  ///< requests that finished (stop/length) at this step
  bool saturated = false;        ///< waiting queue non-empty or batch full when planned
  /// The step's tokens (prefill + decode) filled max_num_batched_tokens: its prefill was bounded
  /// by the budget, not by how much prefill was waiting.
  bool token_budget_full = false;
};

class ServiceEstimator {
 public:
  explicit ServiceEstimator(ServiceEstimatorConfig config = {});

  void OnStep(const StepSample& sample);

  /// Sustainable completion rate mu_hat, requests/s: the prior until measured (0 = unknown).
  double service_rate_rps() const { return mu_rps_; }
  /// Prefill tokens/s achieved beside running decodes: the prior until measured (0 = unknown).
  double prefill_tokens_per_s() const { return prefill_tps_; }
  /// True once a window with steps whose token budget was full measured prefill throughput
  /// (before that, prefill_tokens_per_s() is the prior or a lower bound from light steps).
  bool prefill_capacity_measured() const { return prefill_capacity_measured_; }
  /// Mean decodes per step of the steps that measured prefill capacity (EWMA like the rate;
  /// 0 until measured): the batch prefill_tokens_per_s() was measured beside, so a model of
  /// the rate by decodes can be scaled to it (AdmissionController::PrefillRate).
  double prefill_capacity_decodes() const { return prefill_decodes_; }
  /// Mean engine step duration, seconds (0 = not yet known).
  Seconds step_time_s() const { return step_s_; }

 private:
  void CloseWindow();

  ServiceEstimatorConfig config_;
  double alpha_;
  double mu_rps_;
  double prefill_tps_;
  double prefill_decodes_ = 0;
  Seconds step_s_;
  bool mu_measured_ = false;   // any window has set mu_hat
  bool mu_saturated_ = false;  // a saturated window has measured capacity
  bool prefill_measured_ = false;
  bool prefill_capacity_measured_ = false;
  bool step_measured_ = false;

  // The open window.
  Seconds window_start_s_ = -1;
  std::int64_t completions_ = 0;
  Seconds busy_s_ = 0;
  Seconds saturated_s_ = 0;
  std::int64_t steps_ = 0;
  std::int64_t mixed_prefill_tokens_ = 0;  // steps with a full token budget
  std::int64_t mixed_decode_tokens_ = 0;
  std::int64_t mixed_steps_ = 0;
  Seconds mixed_s_ = 0;
  std::int64_t light_prefill_tokens_ = 0;  // steps that prefilled all that was waiting
  Seconds light_s_ = 0;
};

}  // namespace spillway
