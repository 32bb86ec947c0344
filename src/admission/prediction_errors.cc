#include "admission/prediction_errors.h"

#include <algorithm>
#include <cmath>

namespace spillway {

PredictionErrors::PredictionErrors(PredictionErrorConfig config) : config_(config) {
  ring_.reserve(config_.window);
}

void PredictionErrors::Add(Seconds error_s) {
  if (config_.quantile <= 0 || config_.window == 0) {
    return;
  }
  if (ring_.size() < config_.window) {
    ring_.push_back(error_s);
  } else {
    ring_[next_] = error_s;
  }
  next_ = (next_ + 1) % config_.window;
  ++count_;
  if (count_ >= config_.min_samples && count_ % std::max<std::size_t>(config_.every, 1) == 0) {
    Recompute();
  }
}

void PredictionErrors::set_quantile(double quantile) {
  config_.quantile = quantile;
  margin_s_ = 0;
  if (quantile > 0 && count_ >= config_.min_samples && !ring_.empty()) {
    Recompute();
  }
}

void PredictionErrors::Recompute() {
  std::vector<Seconds> sorted = ring_;
  const auto k =
      static_cast<std::size_t>(std::ceil(config_.quantile * static_cast<double>(sorted.size()))) -
      1;
  const auto at = sorted.begin() + static_cast<std::ptrdiff_t>(std::min(k, sorted.size() - 1));
  std::nth_element(sorted.begin(), at, sorted.end());
  margin_s_ = std::max(0.0, *at);
}

}  // namespace spillway
