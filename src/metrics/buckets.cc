#include "metrics/buckets.h"

#include <cmath>
#include <cstddef>

#include "core/check.h"

namespace spillway::metrics {

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  SPILLWAY_CHECK(start > 0.0);
  SPILLWAY_CHECK(factor > 1.0);
  SPILLWAY_CHECK(count >= 1);
  std::vector<double> bounds(static_cast<std::size_t>(count));
  double bound = start;
  for (double& b : bounds) {
    b = bound;
    bound *= factor;
  }
  SPILLWAY_CHECK(std::isfinite(bounds.back()));
  return bounds;
}

}  // namespace spillway::metrics
