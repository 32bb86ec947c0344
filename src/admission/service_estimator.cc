#include "admission/service_estimator.h"

#include <algorithm>
#include <cmath>

namespace spillway {

ServiceEstimator::ServiceEstimator(ServiceEstimatorConfig config)
    : config_(config),
      alpha_(1.0 - std::exp(-config.window_s / config.time_constant_s)),
      mu_rps_(config.service_rate_prior_rps),
      prefill_tps_(config.prefill_tokens_per_s_prior),
      step_s_(config.step_time_prior_s) {}

void ServiceEstimator::OnStep(const StepSample& s) {
  const Seconds start = s.end_s - s.duration_s;
  if (window_start_s_ < 0) {
    window_start_s_ = start;
  }
  if (s.end_s - window_start_s_ >= config_.window_s && steps_ > 0) {
    CloseWindow();
    window_start_s_ = start;
  }
  completions_ += s.completions;
  busy_s_ += s.duration_s;
  saturated_s_ += s.saturated ? s.duration_s : 0.0;
  ++steps_;
  if (s.prefill_tokens > 0 && s.decode_tokens > 0) {
    (s.token_budget_full ? mixed_prefill_tokens_ : light_prefill_tokens_) += s.prefill_tokens;
    (s.token_budget_full ? mixed_s_ : light_s_) += s.duration_s;
    if (s.token_budget_full) {
      mixed_decode_tokens_ += s.decode_tokens;
      ++mixed_steps_;
    }
  }
}

void ServiceEstimator::CloseWindow() {
  auto ewma = [this](double old, double sample, bool measured) {
    return measured ? alpha_ * sample + (1.0 - alpha_) * old : sample;
  };
  if (busy_s_ > 0) {
    // Completions per second of engine work: idle time is not capacity.
    const double rate = static_cast<double>(completions_) / busy_s_;
    if (saturated_s_ >= 0.5 * busy_s_) {
      // The first capacity measurement replaces whatever lower bound came before it.
      mu_rps_ = ewma(mu_rps_, rate, mu_saturated_);
      mu_saturated_ = true;
      mu_measured_ = true;
    } else if (completions_ > 0) {
      mu_rps_ = std::max(mu_rps_, ewma(mu_rps_, rate, mu_measured_));
      mu_measured_ = true;
    }
  }
  if (mixed_s_ > 0) {
    prefill_tps_ = ewma(prefill_tps_, static_cast<double>(mixed_prefill_tokens_) / mixed_s_,
                        prefill_measured_);
    prefill_decodes_ =
        ewma(prefill_decodes_, static_cast<double>(mixed_decode_tokens_) / mixed_steps_,
             prefill_capacity_measured_);
    prefill_measured_ = true;
    prefill_capacity_measured_ = true;
  } else if (light_s_ > 0) {  // a lower bound only
    prefill_tps_ = std::max(
        prefill_tps_, ewma(prefill_tps_, static_cast<double>(light_prefill_tokens_) / light_s_,
                           prefill_measured_));
    prefill_measured_ = true;
  }
  step_s_ = ewma(step_s_, busy_s_ / static_cast<double>(steps_), step_measured_);
  step_measured_ = true;
  completions_ = 0;
  busy_s_ = 0;
  saturated_s_ = 0;
  steps_ = 0;
  mixed_prefill_tokens_ = 0;
  mixed_decode_tokens_ = 0;
  mixed_steps_ = 0;
  mixed_s_ = 0;
  light_prefill_tokens_ = 0;
  light_s_ = 0;
}

}  // namespace spillway
