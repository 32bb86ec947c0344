#pragma once
// The scenario client's retry decision, shared by the simulator and the load generator: whether
// a failed attempt is retried, and after how long. Pure: no clock, no I/O; randomness (the
// jitter) comes from the caller's Rng.
//
// Algorithm (docs/scenarios.md, `client.retry`):
//   - `none`: never; `fixed` and `backoff-jitter`: while attempts so far < max_attempts.
//   - Retry budget (gRPC retry throttling): every first attempt adds `budget` tokens (capped
//     at kMaxRetryTokens), every retry spends one; a retry without a whole token is not sent.
//     budget 0 means no budget (no tokens are needed).
//   - Delay: `fixed` sleeps interval_s; `backoff-jitter` sleeps
//     min(max_backoff_s, base * 2^(attempts - 1)) + uniform[0, jitter_s), where base is the
//     response's Retry-After when use_retry_after is set and one was given (> 0), else base_s.
// Invariants: tokens in [0, kMaxRetryTokens]; one Rng draw per backoff-jitter retry granted
// (none otherwise), so a seeded driver stays deterministic.

#include <cstdint>
#include <optional>

#include "core/rng.h"
#include "core/types.h"
#include "workload/scenario.h"

namespace spillway {

class RetryPlanner {
 public:
  /// Cap on the budget's token pool.
  static constexpr double kMaxRetryTokens = 1000.0;

  /// `client` must outlive the planner.
  explicit RetryPlanner(const ClientBehaviour& client) : client_(client) {}

  /// A logical request's first attempt was sent: adds the budget's tokens.
  void OnFirstAttempt();

  /// Decides after a failed attempt. `attempts_made` counts the attempts sent so far for this
  /// logical request (>= 1); `retry_after_s` is the response's Retry-After in seconds, 0 when
  /// none. Returns the delay before the next attempt in seconds, or nullopt for no retry.
  /// Spends a budget token and draws the jitter when it grants one.
  std::optional<Seconds> Next(std::int32_t attempts_made, Seconds retry_after_s, Rng& rng);

  /// Budget tokens left (for tests and reports).
  double tokens() const { return tokens_; }

 private:
  const ClientBehaviour& client_;
  double tokens_ = 0;
};

}  // namespace spillway
