#include "admission/forecast_errors.h"

#include <cmath>

namespace spillway {

void ForecastErrors::Observe(std::int32_t priority, Seconds forecast_s, Seconds actual_s) {
  if (!std::isfinite(forecast_s) || !std::isfinite(actual_s)) {
    return;
  }
  auto it = classes_.find(priority);
  if (it == classes_.end()) {
    if (classes_.size() >= kMaxClasses) {
      it = std::prev(classes_.end());  // classes are client-chosen integers: bounded
    } else {
      it = classes_.emplace(priority, PredictionErrors(config_)).first;
    }
  }
  it->second.Add(actual_s - forecast_s);
}

Seconds ForecastErrors::Margin(std::int32_t priority) const {
  auto it = classes_.find(priority);
  if (it == classes_.end()) {
    if (classes_.size() < kMaxClasses || classes_.empty()) {
      return prior_margin_s_;
    }
    it = std::prev(classes_.end());
  }
  return it->second.warmed_up() ? it->second.margin_s() : prior_margin_s_;
}

}  // namespace spillway
