#pragma once
// The generic cell rate algorithm (GCRA, ITU-T I.371; as redis-cell and Brandur Leach's
// throttled use it): a token bucket kept as one number, the theoretical arrival time (TAT) of
// the next unit, so a decision is one read and one write and has no fixed-window edge. Pure:
// time is passed in.
//
// Algorithm: with emission interval T = 1 / rate_per_s and tolerance tau = burst * T, a request
// of `cost` units at `now` would move the TAT to max(TAT, now) + cost * T; it is allowed when
// that is at most now + tau. Over any span of d seconds at most rate_per_s * d + burst units
// pass, which is the bound the shared limit promises across gateways.
//
// The same arithmetic runs in Redis (gateway/quota_script.h); tests check the two agree.

#include "core/types.h"

namespace spillway {

/// A rate limit: rate_per_s units a second (> 0) with a burst of `burst` units (>= 1).
struct GcraLimit {
  double rate_per_s = 1;
  double burst = 1;
};

/// One decision: whether `cost` units were allowed and the TAT to keep (the one given when
/// refused); when refused, the seconds until the same cost would be allowed.
struct GcraDecision {
  bool allowed = false;
  Seconds tat = 0;
  Seconds retry_after_s = 0;
};

/// Decides `cost` units (>= 0; a cost above the burst is taken as the burst: a request larger
/// than the whole bucket passes only when the bucket is full) at `now` against the TAT `tat`
/// (0 or any time <= now: a full bucket).
GcraDecision GcraDecide(Seconds tat, Seconds now, const GcraLimit& limit, double cost);

/// The TAT after `units` (> 0: charged, < 0: given back) are applied outside a decision (a
/// reservation corrected by what was used), never below `now` (a full bucket stays full).
Seconds GcraAdjust(Seconds tat, Seconds now, const GcraLimit& limit, double units);

}  // namespace spillway
