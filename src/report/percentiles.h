#pragma once
// Percentiles of latency samples.
//
// Exact percentiles use the nearest-rank method on sorted samples (the value at rank
// ceil(p/100 * n)), as numpy's "inverted_cdf". LogHistogram keeps streams too long to store
// (inter-token latencies) in log-spaced buckets with a relative error of at most 1%.

#include <cstdint>
#include <vector>

namespace spillway {

struct Percentiles {
  double p50 = 0;
  double p95 = 0;
  double p99 = 0;
  double mean = 0;
  double max = 0;
  std::int64_t count = 0;
};

/// Nearest-rank percentile p in [0, 100] of `sorted` (ascending, non-empty).
double NearestRank(const std::vector<double>& sorted, double p);

/// p50/p95/p99/mean/max of `samples` (sorted in place). All zero when empty.
Percentiles Summarize(std::vector<double>& samples);

/// Log-bucketed histogram of positive values (seconds) from 1 microsecond to ~1 hour.
class LogHistogram {
 public:
  LogHistogram();
  void Add(double value);
  /// Approximate percentile p in [0, 100] (bucket midpoint, <= 1% relative error).
  double Percentile(double p) const;
  Percentiles Summary() const;
  std::int64_t count() const { return count_; }

 private:
  std::vector<std::int64_t> buckets_;
  std::int64_t count_ = 0;
  double sum_ = 0;
  double max_ = 0;
};

}  // namespace spillway
