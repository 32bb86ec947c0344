#pragma once
// How far the engine's TTFT forecasts fall short, measured on the requests it admitted: the
// safety margin of the forecast policy (admission.h).
//
// The forecast steps a copy of the engine forward with the mean output lengths learned so far
// (Engine::ForecastFirstToken). With exact lengths it is exact to a step; with lengths that
// vary, running requests finish earlier or later than their means, and under priority
// scheduling more urgent requests that arrive later overtake; and a long prompt, whose chunks
// share steps with requests that arrive while it prefills, is exposed longer than a short one
// (on scenarios/shared-system-prompt.yaml, 28 of 300 documents of 4k to 8k tokens were late
// against 0 of 1,541 short prompts with one margin for both). So the errors are kept per
// priority class and prompt size (PromptBucket: below 1k, 4k, 16k tokens, or above; at most
// kMaxClasses such classes; the rest share the last one's), each a
// PredictionErrors (its quantile, window and warm-up): the margin of a class is the quantile
// of its recent errors. A request dropped at the queue head never saw its first token: its
// wait until the drop is a lower bound of its TTFT and counts as its actual, so a forecast
// that let requests be dropped raises the margin.
//
// Not thread-safe; no clock, no I/O. Memory: at most kMaxClasses x window errors.

#include <cstdint>
#include <map>
#include <utility>

#include "admission/prediction_errors.h"
#include "core/types.h"

namespace spillway {

class ForecastErrors {
 public:
  /// 16 priority classes of 4 prompt sizes each.
  static constexpr std::size_t kMaxClasses = 64;

  /// `prior_margin_s`: the margin of a class before it has min_samples errors.
  explicit ForecastErrors(PredictionErrorConfig config = {}, Seconds prior_margin_s = 0)
      : config_(config), prior_margin_s_(prior_margin_s) {}

  /// A request of class `priority` with `prompt_tokens` to prefill, admitted with a forecast of
  /// `forecast_s`, saw its first token `actual_s` after its arrival, or was dropped at the queue
  /// head then (a lower bound).
  void Observe(std::int32_t priority, Seconds forecast_s, Seconds actual_s,
               std::int32_t prompt_tokens = 0);

  /// The margin to add to a forecast for class `priority` and `prompt_tokens` to prefill,
  /// seconds (>= 0; the prior until the class has PredictionErrorConfig::min_samples errors).
  Seconds Margin(std::int32_t priority, std::int32_t prompt_tokens = 0) const;

  /// The prompt-size class of `prompt_tokens`: 0 below 1,024, 1 below 4,096, 2 below 16,384,
  /// else 3.
  static std::int32_t PromptBucket(std::int32_t prompt_tokens);

  const PredictionErrorConfig& config() const { return config_; }

 private:
  PredictionErrorConfig config_;
  Seconds prior_margin_s_ = 0;
  using Key = std::pair<std::int32_t, std::int32_t>;  // priority, PromptBucket
  std::map<Key, PredictionErrors> classes_;
};

}  // namespace spillway
