#include "report/histogram.h"

#include <algorithm>
#include <functional>

#include "core/check.h"

namespace spillway {

std::int64_t BucketCounts::Total() const {
  std::int64_t total = overflow;
  for (const std::int64_t c : counts) {
    total += c;
  }
  return total;
}

std::vector<double> TtftBucketBoundsSeconds() {
  // R10 mantissas in hundredths; dividing exact integers keeps each edge the double nearest
  // its decimal value (0.00125, not 0.0012500000000000002).
  constexpr int kR10[] = {100, 125, 160, 200, 250, 315, 400, 500, 630, 800};
  // Decades 1 ms, 10 ms, 100 ms, 1 s, 10 s: mantissa / divisor.
  constexpr double kDivisors[] = {1e5, 1e4, 1e3, 1e2, 1e1};
  std::vector<double> bounds;
  for (const double divisor : kDivisors) {
    for (const int m : kR10) {
      bounds.push_back(m / divisor);
    }
  }
  bounds.push_back(100.0);
  return bounds;
}

BucketCounts CountInBuckets(const std::vector<double>& samples, std::vector<double> bounds) {
  SPILLWAY_CHECK(!bounds.empty() && std::adjacent_find(bounds.begin(), bounds.end(),
                                                       std::greater_equal<>()) == bounds.end());
  BucketCounts out;
  out.bounds = std::move(bounds);
  out.counts.assign(out.bounds.size(), 0);
  for (const double v : samples) {
    // First edge >= v: v lies in (bounds[i-1], bounds[i]].
    const auto it = std::lower_bound(out.bounds.begin(), out.bounds.end(), v);
    if (it == out.bounds.end()) {
      ++out.overflow;
    } else {
      ++out.counts[static_cast<std::size_t>(it - out.bounds.begin())];
    }
  }
  return out;
}

}  // namespace spillway
