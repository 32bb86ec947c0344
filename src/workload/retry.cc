#include "workload/retry.h"

#include <algorithm>
#include <cmath>

namespace spillway {

void RetryPlanner::OnFirstAttempt() {
  tokens_ = std::min(tokens_ + client_.retry_budget, kMaxRetryTokens);
}

std::optional<Seconds> RetryPlanner::Next(std::int32_t attempts_made, Seconds retry_after_s,
                                          Rng& rng) {
  const ClientBehaviour& c = client_;
  if (c.retry == RetryPolicy::kNone || attempts_made >= c.max_attempts) {
    return std::nullopt;
  }
  if (c.retry_budget > 0) {
    if (tokens_ < 1.0) {
      return std::nullopt;
    }
    tokens_ -= 1.0;
  }
  if (c.retry == RetryPolicy::kFixed) {
    return c.retry_interval_s;
  }
  const Seconds base = (c.use_retry_after && retry_after_s > 0) ? retry_after_s : c.backoff_base_s;
  return std::min(c.backoff_max_s, base * std::pow(2.0, attempts_made - 1)) +
         rng.Uniform(0, c.jitter_s);
}

}  // namespace spillway
