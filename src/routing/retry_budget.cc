#include "routing/retry_budget.h"

#include <cmath>

namespace spillway::routing {

RetryBudget::RetryBudget(double ratio, Seconds window_s, std::int32_t min_retries)
    : ratio_(ratio), window_s_(window_s), min_retries_(min_retries) {}

RetryBudget::Bucket& RetryBudget::At(Seconds now) {
  const auto second = static_cast<std::int64_t>(std::floor(now));
  const auto oldest = static_cast<std::int64_t>(std::floor(now - window_s_));
  while (!buckets_.empty() && buckets_.front().second <= oldest) {
    buckets_.pop_front();
  }
  if (buckets_.empty() || buckets_.back().second != second) {
    buckets_.push_back({second, 0, 0});
  }
  return buckets_.back();
}

void RetryBudget::OnRequest(Seconds now) { ++At(now).requests; }

bool RetryBudget::TryRetry(Seconds now) {
  Bucket& current = At(now);
  std::int64_t requests = 0;
  std::int64_t retries = 0;
  for (const Bucket& b : buckets_) {
    requests += b.requests;
    retries += b.retries;
  }
  const double allowed = std::max(static_cast<double>(min_retries_), ratio_ * requests);
  if (static_cast<double>(retries) + 1 > allowed) {
    return false;
  }
  ++current.retries;
  return true;
}

void RetryBudget::Reconfigure(double ratio, Seconds window_s, std::int32_t min_retries) {
  ratio_ = ratio;
  window_s_ = window_s;
  min_retries_ = min_retries;
}

}  // namespace spillway::routing
