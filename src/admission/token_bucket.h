#pragma once
// Token bucket rate limiter (per tenant): `rate` tokens per second refill a bucket of capacity
// `burst`; each request takes one token. Time is passed in; no clock is read.

#include "core/types.h"

namespace spillway {

class TokenBucket {
 public:
  /// rate_per_s > 0, burst >= 1. Starts full at time `now`.
  TokenBucket(double rate_per_s, double burst, Seconds now);

  /// Takes one token if available at `now` (time must not go backwards; earlier times are
  /// treated as `now` of the last call). Returns true when taken.
  bool TryTake(Seconds now);

  /// Seconds from `now` until one token is available (0 if one is).
  Seconds TimeUntilAvailable(Seconds now) const;

  double tokens(Seconds now) const;
  double rate_per_s() const { return rate_per_s_; }
  double burst() const { return burst_; }

 private:
  void Refill(Seconds now);

  double rate_per_s_;
  double burst_;
  double tokens_;
  Seconds last_s_;
};

}  // namespace spillway
