#pragma once
// Feeds a ServiceEstimator (or an AdmissionController) back-to-back engine steps in virtual
// time, window by window, so that every measurement window holds exactly the steps the test
// describes and the measured rates are exact in binary floating point.
//
// Steps last kStepS = 1/128 s. A window closes at the start of the first step that would end
// window_s or more after the window began, so with window_s = 64.5 steps every window holds
// exactly 64 steps = 0.5 s of engine time. A window's results appear when the next window's
// first step arrives: call Settle() to deliver them (Settle() feeds that first step: no
// completions, not saturated, decode only; the next RunWindow() fills the window's other 63).

#include <cstdint>

#include "admission/service_estimator.h"

namespace spillway::testing_util {

inline constexpr Seconds kStepS = 1.0 / 128;
inline constexpr int kStepsPerWindow = 64;
inline constexpr Seconds kWindowS = kStepsPerWindow * kStepS;  // 0.5 s

/// Estimator config whose windows hold exactly kStepsPerWindow steps of a StepFeeder.
inline ServiceEstimatorConfig FeederEstimatorConfig(ServiceEstimatorConfig base = {}) {
  base.window_s = kWindowS + kStepS / 2;
  return base;
}

/// What one window of steps contains.
struct WindowSpec {
  int completions = 0;      ///< requests finished in the window (at most one per step)
  int saturated_steps = 0;  ///< steps planned with requests waiting or the batch full
  std::int32_t prefill_tokens_per_step = 0;
  std::int32_t decode_tokens_per_step = 32;
};

template <typename Sink>
class StepFeeder {
 public:
  explicit StepFeeder(Sink* sink, Seconds start_s = 0) : sink_(sink), now_s_(start_s) {}

  /// Fills the rest of the current window according to `spec`: step i of the window (0-based)
  /// completes a request when i >= 64 - completions and is saturated when
  /// i >= 64 - saturated_steps.
  void RunWindow(const WindowSpec& spec) {
    for (; slot_ < kStepsPerWindow; ++slot_) {
      StepSample s;
      s.duration_s = kStepS;
      s.end_s = now_s_ + kStepS;
      s.prefill_tokens = spec.prefill_tokens_per_step;
      s.decode_tokens = spec.decode_tokens_per_step;
      s.completions = slot_ >= kStepsPerWindow - spec.completions ? 1 : 0;
      s.saturated = slot_ >= kStepsPerWindow - spec.saturated_steps;
      Feed(s);
    }
    slot_ = 0;
  }

  /// Runs `count` identical windows.
  void RunWindows(int count, const WindowSpec& spec) {
    for (int i = 0; i < count; ++i) {
      RunWindow(spec);
    }
  }

  /// Closes the last window so its measurement is visible (feeds the next window's first step).
  void Settle() {
    if (slot_ != 0) {
      return;
    }
    StepSample s;
    s.duration_s = kStepS;
    s.end_s = now_s_ + kStepS;
    s.decode_tokens = 1;
    Feed(s);
    slot_ = 1;
  }

  Seconds now_s() const { return now_s_; }

 private:
  void Feed(const StepSample& s) {
    sink_->OnStep(s);
    now_s_ = s.end_s;
  }

  Sink* sink_;
  Seconds now_s_;
  int slot_ = 0;
};

}  // namespace spillway::testing_util
