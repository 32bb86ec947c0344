#pragma once
// Histogram bucket bounds (upper bounds, strictly increasing, +Inf implicit) for
// Registry::AddHistogram.

#include <array>
#include <vector>

namespace spillway::metrics {

/// `count` bounds: start, start*factor, ..., start*factor^(count-1), each the previous times
/// `factor` (as client_golang's prometheus.ExponentialBuckets). Requires start > 0, factor > 1,
/// count >= 1 and a finite last bound (SPILLWAY_CHECK). Units are the caller's.
std::vector<double> ExponentialBuckets(double start, double factor, int count);

/// Upper bounds, in seconds, of vLLM's `vllm:time_to_first_token_seconds` histogram, so that
/// dashboards and histogram_quantile() queries written for vLLM read our latency histograms the
/// same way. Source: vllm-project/vllm, vllm/v1/metrics/loggers.py (PrometheusStatLogger,
/// `histogram_time_to_first_token`); the older v0 engine (vllm/engine/metrics.py) stopped at
/// 10.0. The tail steps 80 -> 160 -> 640 -> 2560 are vLLM's as published (not a doubling).
inline constexpr std::array<double, 22> kLatencyBucketsSeconds = {
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
    1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};

/// kLatencyBucketsSeconds as the vector AddHistogram takes.
inline std::vector<double> LatencyBucketsSeconds() {
  return {kLatencyBucketsSeconds.begin(), kLatencyBucketsSeconds.end()};
}

}  // namespace spillway::metrics
