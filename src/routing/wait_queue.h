#pragma once
// The gateway's bounded waiting room (flow control before dispatch, as the Gateway API Inference
// Extension's flow-control layer and Triton's DELAY queues): when no endpoint can start a request
// within its TTFT SLO right now, it may wait here a few hundred milliseconds for a slot instead
// of being refused at once; nothing waits past its TTFT budget.
//
// Algorithm: one queue for every priority class; the next to go is the entry of the most urgent
// *effective* class, where a waiting entry's effective class is its priority less one per
// `aging_s` waited (so a low class is not starved behind a steady stream of urgent ones: after
// priority * aging_s it competes as class 0). Within a class, FIFO while the queue absorbs a
// burst; once it has not emptied for `max_wait_s` (a standing queue: sustained overload,
// where waiting adds no capacity and only eats the TTFT budget) the wait allowed drops to
// `standing_max_wait_s` and the newest goes first, as CoDel with adaptive LIFO in Facebook's
// "Fail at Scale" (ACM Queue 13(8), 2015): whoever is served is served fresh, and the rest are
// refused at once instead of late. An entry waits at most min(max_wait_s, its TTFT SLO), or
// standing_max_wait_s while the queue stands: past it, it is expired (the driver answers 429
// queue_deadline_exceeded). Invariants: at most `max_queued` entries; each ticket at most once.
// Pure: `now` is passed in. Not thread-safe.

#include <cstdint>
#include <optional>
#include <vector>

#include "core/types.h"
#include "routing/router.h"

namespace spillway::routing {

struct WaitQueueConfig {
  /// The longest a request may wait for a slot; 0 (the default) turns the queue off: refused
  /// at once. (Off by default: on the fleet scenarios waiting never raised goodput, and cost
  /// 10% of it in front of engines that admit everything; docs/gateway.md, "The wait queue".)
  Seconds max_wait_s = 0;
  /// Waiting requests of the pool, every class together; beyond it a request is refused at once.
  std::int32_t max_queued = 256;
  /// A waiting request gains one class of urgency per this many seconds waited (> 0).
  Seconds aging_s = 0.1;
  /// The wait allowed while the queue stands, that is, has not been empty for max_wait_s
  /// (sustained overload; newest first then).
  Seconds standing_max_wait_s = 0.02;
};

/// Identifies a waiting request to its driver (the live gateway's request number, the
/// simulator's attempt index).
using Ticket = std::uint64_t;

class WaitQueue {
 public:
  explicit WaitQueue(WaitQueueConfig config) : config_(config) {}

  struct Entry {
    Ticket ticket = 0;
    RouteRequest request;
    Seconds enqueued_s = 0;
    Seconds expires_s = 0;  ///< enqueued + min(max_wait_s, slo_s)
    Seconds slo_s = 0;      ///< the request's TTFT SLO, from its arrival
  };

  bool enabled() const { return config_.max_wait_s > 0 && config_.max_queued > 0; }
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }
  const WaitQueueConfig& config() const { return config_; }
  /// New settings for arrivals from now on; those waiting keep the TTL they were given.
  void set_config(const WaitQueueConfig& config) { config_ = config; }

  /// Adds a request with TTFT SLO `slo_s` at `now` and returns when its wait ends at the
  /// latest (its TTL); nullopt (nothing added) when the queue is off or full.
  std::optional<Seconds> Push(Ticket ticket, const RouteRequest& request, Seconds slo_s,
                              Seconds now);
  /// Removes `ticket` (its client left); nullopt when it is not waiting.
  std::optional<Entry> Remove(Ticket ticket);
  /// The entry to serve next at `now` (most urgent effective class, then arrival); null when
  /// empty.
  const Entry* Next(Seconds now) const;
  /// The entry whose wait ran out by `now` (its TTL, or standing_max_wait_s while the queue
  /// stands) that ran out first; null when none has.
  const Entry* Expired(Seconds now) const;
  /// Whether the queue has not been empty for max_wait_s at `now`.
  bool Standing(Seconds now) const;
  /// Whether an arrival of `priority` must wait behind someone already here (an entry of the
  /// same or a more urgent effective class): arrivals do not overtake.
  bool AnyAsUrgent(std::int32_t priority, Seconds now) const;

 private:
  double EffectiveClass(const Entry& e, Seconds now) const;
  /// When `e`'s wait runs out, seen at `now`.
  Seconds ExpiresAt(const Entry& e, Seconds now) const;

  WaitQueueConfig config_;
  std::vector<Entry> entries_;    // at most max_queued, in arrival order
  Seconds nonempty_since_s_ = 0;  // when the last push into an empty queue happened
};

}  // namespace spillway::routing
