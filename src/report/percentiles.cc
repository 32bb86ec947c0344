#include "report/percentiles.h"

#include <algorithm>
#include <cmath>

namespace spillway {
namespace {

constexpr double kMin = 1e-6;
constexpr double kGrowth = 1.02;  // bucket width: 2%, so the midpoint is within 1%
const double kLogGrowth = std::log(kGrowth);
constexpr int kBuckets = 1100;  // 1e-6 * 1.02^1100 ~ 2.9e3 s

int BucketOf(double v) {
  if (v <= kMin) {
    return 0;
  }
  const int b = 1 + static_cast<int>(std::log(v / kMin) / kLogGrowth);
  return std::min(b, kBuckets - 1);
}

double BucketMid(int b) {
  if (b == 0) {
    return kMin;
  }
  const double lo = kMin * std::pow(kGrowth, b - 1);
  return lo * (1.0 + kGrowth) / 2.0;
}

}  // namespace

double NearestRank(const std::vector<double>& sorted, double p) {
  const auto n = static_cast<double>(sorted.size());
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

Percentiles Summarize(std::vector<double>& samples) {
  Percentiles out;
  if (samples.empty()) {
    return out;
  }
  std::sort(samples.begin(), samples.end());
  out.count = static_cast<std::int64_t>(samples.size());
  out.p50 = NearestRank(samples, 50);
  out.p95 = NearestRank(samples, 95);
  out.p99 = NearestRank(samples, 99);
  out.max = samples.back();
  double sum = 0;
  for (double v : samples) {
    sum += v;
  }
  out.mean = sum / static_cast<double>(samples.size());
  return out;
}

LogHistogram::LogHistogram() : buckets_(kBuckets, 0) {}

void LogHistogram::Add(double value) {
  ++buckets_[static_cast<std::size_t>(BucketOf(value))];
  ++count_;
  sum_ += value;
  max_ = std::max(max_, value);
}

double LogHistogram::Percentile(double p) const {
  if (count_ == 0) {
    return 0;
  }
  auto rank = static_cast<std::int64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<std::int64_t>(rank, 1, count_);
  std::int64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += buckets_[static_cast<std::size_t>(b)];
    if (seen >= rank) {
      return std::min(BucketMid(b), max_);
    }
  }
  return max_;
}

Percentiles LogHistogram::Summary() const {
  Percentiles out;
  out.count = count_;
  if (count_ == 0) {
    return out;
  }
  out.p50 = Percentile(50);
  out.p95 = Percentile(95);
  out.p99 = Percentile(99);
  out.mean = sum_ / static_cast<double>(count_);
  out.max = max_;
  return out;
}

}  // namespace spillway
