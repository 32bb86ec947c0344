#include "admission/forecast_errors.h"

#include <cmath>

namespace spillway {

std::int32_t ForecastErrors::PromptBucket(std::int32_t prompt_tokens) {
  return prompt_tokens < 1024 ? 0 : prompt_tokens < 4096 ? 1 : prompt_tokens < 16384 ? 2 : 3;
}

void ForecastErrors::Observe(std::int32_t priority, Seconds forecast_s, Seconds actual_s,
                             std::int32_t prompt_tokens) {
  if (!std::isfinite(forecast_s) || !std::isfinite(actual_s)) {
    return;
  }
  const Key key{priority, PromptBucket(prompt_tokens)};
  auto it = classes_.find(key);
  if (it == classes_.end()) {
    if (classes_.size() >= kMaxClasses) {
      it = std::prev(classes_.end());  // classes are client-chosen integers: bounded
    } else {
      it = classes_.emplace(key, PredictionErrors(config_)).first;
    }
  }
  it->second.Add(actual_s - forecast_s);
}

Seconds ForecastErrors::Margin(std::int32_t priority, std::int32_t prompt_tokens) const {
  auto it = classes_.find(Key{priority, PromptBucket(prompt_tokens)});
  if (it == classes_.end()) {
    if (classes_.size() < kMaxClasses || classes_.empty()) {
      return prior_margin_s_;
    }
    it = std::prev(classes_.end());
  }
  return it->second.warmed_up() ? it->second.margin_s() : prior_margin_s_;
}

}  // namespace spillway
