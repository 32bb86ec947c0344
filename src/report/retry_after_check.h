#pragma once
// Checks the Retry-After of overload answers against the true drain time of the queue they
// were given for (failure scenario 6, scenarios/failure/recovery.yaml). Pure; shared by the
// simulator (exact times) and the load generator (times estimated at the client).
//
// Definitions:
//   queue span     an admitted request's stay in a waiting queue: from its admission
//                  (entered_s) until it first left the queue: its first prefill was scheduled,
//                  or it was dropped at the queue head or aborted while waiting (left_s). A
//                  preempted request that waits again is not counted a second time.
//   drain time     of an answer given at time t by queue q: how long until every request
//                  waiting in q at t has left it, i.e. the backlog in front of a retry cleared:
//                  max(0, max{left_s - t : entered_s <= t on q}) (spans that left before t add
//                  nothing). Under FCFS it is when the last request waiting at t leaves.
//   shortfall      drain time - Retry-After, seconds; the criterion is shortfall <= tolerance
//                  (1 s: Retry-After is whole seconds) for every checked answer.
// Checked answers (RetryAfterChecked): 429 and 503 with a Retry-After, except the tenant quotas'
// (`rate_limited` and the gateway's token, retry and limiter-unavailable refusals) (its Retry-After
// is the tenant's token-bucket refill time, not a queue's) and `draining` (a server shutting down
// says "retry elsewhere", not "this queue drains by then").
//
// Algorithm: spans sorted by (queue, entered_s) with a running maximum of left_s; each answer
// finds the last span entered at or before it by binary search. O((S + A) log S).

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/types.h"
#include "report/run_summary.h"

namespace spillway {

/// An admitted request's stay in waiting queue `queue` (a replica), seconds on the run's clock.
struct QueueSpan {
  Seconds entered_s = 0;
  Seconds left_s = 0;  ///< >= entered_s
  std::int32_t queue = 0;
};

/// An overload answer with a Retry-After, given at `t_s` for queue `queue`.
/// RetryAfterSample::queue of a refusal made for a whole pool (the gateway's): a retry succeeds
/// when any queue has room, so the drain is the shortest of the queues'.
inline constexpr std::int32_t kAnyQueue = -1;

struct RetryAfterSample {
  Seconds t_s = 0;
  Seconds retry_after_s = 0;  ///< the header's value, seconds (> 0)
  std::int32_t queue = 0;     ///< the replica's queue, or kAnyQueue
};

/// The tolerance of the criterion: Retry-After is whole seconds, so it may fall short of the
/// drain time by up to 1 s.
inline constexpr Seconds kRetryAfterTolerance_s = 1.0;

/// True for the answers the check covers: status 429 or 503, `retry_after_s` > 0, and a
/// reason other than "rate_limited" and "draining".
bool RetryAfterChecked(int http_status, std::string_view reason, Seconds retry_after_s);

/// The drain time of each sample (seconds, >= 0), in the order given. `spans` need not be
/// sorted.
std::vector<Seconds> DrainTimes(std::vector<QueueSpan> spans,
                                const std::vector<RetryAfterSample>& samples);

/// The summary statistics of the check (RunSummary::retry_after); `tolerance_s` >= 0.
RetryAfterSummary CheckRetryAfter(std::vector<QueueSpan> spans,
                                  const std::vector<RetryAfterSample>& samples,
                                  Seconds tolerance_s = kRetryAfterTolerance_s);

}  // namespace spillway
