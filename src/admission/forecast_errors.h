#pragma once
// How far the engine's TTFT forecasts fall short, measured on the requests it admitted: the
// safety margin of the forecast policy (admission.h).
//
// The forecast steps a copy of the engine forward with the mean output lengths learned so far
// (Engine::ForecastFirstToken). With exact lengths it is exact to a step; with lengths that
// vary, running requests finish earlier or later than their means, and under priority
// scheduling more urgent requests that arrive later overtake. So the errors are kept per
// priority class (at most kMaxClasses classes; the rest share the last one's), each a
// PredictionErrors (its quantile, window and warm-up): the margin of a class is the quantile
// of its recent errors. A request dropped at the queue head never saw its first token: its
// wait until the drop is a lower bound of its TTFT and counts as its actual, so a forecast
// that let requests be dropped raises the margin.
//
// Not thread-safe; no clock, no I/O. Memory: at most kMaxClasses x window errors.

#include <cstdint>
#include <map>

#include "admission/prediction_errors.h"
#include "core/types.h"

namespace spillway {

class ForecastErrors {
 public:
  static constexpr std::size_t kMaxClasses = 16;

  /// `prior_margin_s`: the margin of a class before it has min_samples errors.
  explicit ForecastErrors(PredictionErrorConfig config = {}, Seconds prior_margin_s = 0)
      : config_(config), prior_margin_s_(prior_margin_s) {}

  /// A request of class `priority` admitted with a forecast of `forecast_s` saw its first
  /// token `actual_s` after its arrival, or was dropped at the queue head then (a lower bound).
  void Observe(std::int32_t priority, Seconds forecast_s, Seconds actual_s);

  /// The margin to add to a forecast for class `priority`, seconds (>= 0; the prior until the
  /// class has PredictionErrorConfig::min_samples errors).
  Seconds Margin(std::int32_t priority) const;

  const PredictionErrorConfig& config() const { return config_; }

 private:
  PredictionErrorConfig config_;
  Seconds prior_margin_s_ = 0;
  std::map<std::int32_t, PredictionErrors> classes_;
};

}  // namespace spillway
