#include "admission/token_bucket.h"

#include <algorithm>

#include "core/check.h"

namespace spillway {

TokenBucket::TokenBucket(double rate_per_s, double burst, Seconds now)
    : rate_per_s_(rate_per_s), burst_(burst), tokens_(burst), last_s_(now) {
  SPILLWAY_CHECK(rate_per_s > 0 && burst >= 1);
}

void TokenBucket::Refill(Seconds now) {
  if (now > last_s_) {
    tokens_ = std::min(burst_, tokens_ + (now - last_s_) * rate_per_s_);
    last_s_ = now;
  }
}

bool TokenBucket::TryTake(Seconds now) {
  Refill(now);
  if (tokens_ >= 1.0) {
    tokens_ -= 1.0;
    return true;
  }
  return false;
}

double TokenBucket::tokens(Seconds now) const {
  return now > last_s_ ? std::min(burst_, tokens_ + (now - last_s_) * rate_per_s_) : tokens_;
}

Seconds TokenBucket::TimeUntilAvailable(Seconds now) const {
  const double have = tokens(now);
  return have >= 1.0 ? 0.0 : (1.0 - have) / rate_per_s_;
}

}  // namespace spillway
