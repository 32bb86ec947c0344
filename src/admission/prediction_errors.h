#pragma once
// How far TTFT predictions fall short, learned from the requests they let in: the error
// (measured TTFT - predicted TTFT) of the last `window` of them, and a high quantile of it, the
// margin. Admitting against the TTFT SLO less that margin, the requests let in meet the SLO at
// that quantile even where the prediction is optimistic: the gap between the mean service
// time it models and the tail the SLO is judged on. Two users: the gateway's router, from the
// replies it relays (its prediction is queue ahead / measured rate + prefill), and the
// engine's forecast policy, from its own first tokens (forecast_errors.h).
//
// Algorithm: a ring of the last `window` errors; every `every` new errors the margin is
// recomputed as their `quantile` (nth_element on a copy), floored at 0 (a pessimistic
// prediction is not loosened). No margin until `min_samples` errors are in. Pure. Not
// thread-safe.

#include <cstddef>
#include <vector>

#include "core/types.h"

namespace spillway {

struct PredictionErrorConfig {
  /// In (0, 1]; 0 turns the correction off. 0.95 measured best of 0.5 to 0.99 on the fleet
  /// scenarios (docs/gateway.md, "Learning from its errors").
  double quantile = 0.95;
  std::size_t window = 256;
  std::size_t every = 16;
  std::size_t min_samples = 32;
};

class PredictionErrors {
 public:
  explicit PredictionErrors(PredictionErrorConfig config = {});

  /// One forwarded request's error: measured TTFT - predicted TTFT, seconds.
  void Add(Seconds error_s);
  /// A new quantile (0: off, the margin back to 0); the errors seen so far stay.
  void set_quantile(double quantile);
  /// The margin the router subtracts from the TTFT SLO, seconds (>= 0).
  Seconds margin_s() const { return margin_s_; }
  /// True once min_samples errors are in (the margin rests on measurements).
  bool warmed_up() const { return count_ >= config_.min_samples; }

 private:
  void Recompute();

  PredictionErrorConfig config_;
  std::vector<Seconds> ring_;
  std::size_t next_ = 0;
  std::size_t count_ = 0;  // errors added, all time
  Seconds margin_s_ = 0;
};

}  // namespace spillway
