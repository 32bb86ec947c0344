#pragma once
// A retry budget (Envoy's retry_budget; Google SRE book, ch. 22, "Handling Overload"): retries
// may add at most `ratio` of the requests of the last `window_s`, with `min_retries` always
// allowed in a window, so a failing pool sees at most (1 + ratio) times its offered load from
// the gateway instead of max_attempts times. Counted in one-second buckets over the window.
// Pure: `now` is passed in. Not thread-safe.

#include <cstdint>
#include <deque>

#include "core/types.h"

namespace spillway::routing {

class RetryBudget {
 public:
  RetryBudget(double ratio, Seconds window_s, std::int32_t min_retries);

  /// A request received at `now`.
  void OnRequest(Seconds now);
  /// Whether a retry may be sent at `now`; when it may, it is counted.
  bool TryRetry(Seconds now);
  /// New limits; the counts of the window stay.
  void Reconfigure(double ratio, Seconds window_s, std::int32_t min_retries);

 private:
  struct Bucket {
    std::int64_t second = 0;
    std::int64_t requests = 0;
    std::int64_t retries = 0;
  };
  Bucket& At(Seconds now);

  double ratio_;
  Seconds window_s_;
  std::int32_t min_retries_;
  std::deque<Bucket> buckets_;
};

}  // namespace spillway::routing
