#include "admission/gcra.h"

#include <algorithm>

#include "core/check.h"

namespace spillway {

GcraDecision GcraDecide(Seconds tat, Seconds now, const GcraLimit& limit, double cost) {
  SPILLWAY_CHECK(limit.rate_per_s > 0 && limit.burst >= 1 && cost >= 0);
  const double interval_s = 1.0 / limit.rate_per_s;
  const double tolerance_s = limit.burst * interval_s;
  const double units = std::min(cost, limit.burst);
  const Seconds next = std::max(tat, now) + units * interval_s;
  // (A relative tolerance: the Lua script computes in integer microseconds.)
  if (next - now <= tolerance_s + 1e-9) {
    return {true, next, 0};
  }
  return {false, tat, next - tolerance_s - now};
}

Seconds GcraAdjust(Seconds tat, Seconds now, const GcraLimit& limit, double units) {
  SPILLWAY_CHECK(limit.rate_per_s > 0);
  return std::max(now, std::max(tat, now) + units / limit.rate_per_s);
}

}  // namespace spillway
