#pragma once
// One model's pool as the gateway's first stage sees it, whole: the Router, one EndpointState
// per endpoint, their health (PoolHealth: probes and passive ejection) and the retry budget.
// The live gateway (gateway/endpoint_pool.h, behind a mutex) and the simulator
// (sim/gateway_front.h) drive this same object with the same events, so every routing, health
// and retry decision the gateway makes live can be simulated. Pure: `now` is passed in; no
// clock, no I/O. Not thread-safe.
//
// A request's life: OnReceived; Admit (routed at once, or queued in the wait queue until
// DispatchNext routes or expires it, or CancelWaiting when its client leaves); a forward is
// recorded as sent; the attempt ends with OnFinish (and OnFirstToken when it streamed); after an
// attempt that failed before the client got a byte (the endpoint refused or could not be
// reached), MayRetry says whether to Route again (with the tried endpoints excluded). The driver
// calls DispatchNext until it says nothing more can go after every event that may free a slot
// (an attempt's end, a scrape, a probe, an arrival that queued).

#include <cstdint>
#include <vector>

#include "admission/fair_share.h"
#include "admission/prediction_errors.h"
#include "routing/endpoint_health.h"
#include "routing/endpoint_state.h"
#include "routing/prefix_index.h"
#include "routing/retry_budget.h"
#include "routing/router.h"
#include "routing/wait_queue.h"

namespace spillway::routing {

/// Retries at the gateway: only before the first byte reached the client, never on an
/// endpoint already tried, at most max_attempts sends in all, and within the retry budget
/// (retry_budget.h).
struct RetryConfig {
  std::int32_t max_attempts = 2;
  double budget_ratio = 0.1;
  Seconds budget_window_s = 10;
  std::int32_t min_retries = 3;
};

struct PoolConfig {
  RouterConfig router;
  HealthConfig health;
  RetryConfig retry;
  WaitQueueConfig queue;  ///< the gateway router's waiting room (the baselines refuse at once)
  /// The gateway router's margin learned from its prediction errors (prediction_errors.h).
  PredictionErrorConfig prediction;
  /// Fair shedding across the pool's flows (admission/fair_share.h; off by default): a
  /// request of a flow served above r x its offered share is refused 429 fair_share while another
  /// flow, refused for load, has fallen below min_share_ratio x its offered share.
  FairShareConfig fair_share;
};

/// Why MayRetry said no.
enum class RetryDenial : std::uint8_t { kNone, kAttempts, kNoEndpoint, kBudget };
std::string_view ToString(RetryDenial denial);  ///< "", "attempts", "no_endpoint", "budget"

class Pool {
 public:
  Pool(std::vector<EndpointState> endpoints, PoolConfig config);

  std::size_t size() const { return endpoints_.size(); }
  const EndpointState& endpoint(std::size_t i) const { return endpoints_[i]; }
  const Router& router() const { return router_; }

  /// A config reload: one more endpoint (healthy until probed); returns its index.
  std::size_t AddEndpoint(EndpointState endpoint);
  /// A config reload: endpoint `i` leaves the pool (removed: draining for good, its in-flight
  /// requests finish) or comes back (not removed: a clean health record, its measured rates
  /// kept). Indexes never change: an endpoint removed stays at its index.
  void SetRemoved(std::size_t i, bool removed, Seconds now);
  bool removed(std::size_t i) const { return health_.removed(i); }
  /// A config reload: endpoint `i`'s priors (EndpointState::set_priors).
  void SetPriors(std::size_t i, const EndpointPriors& priors) { endpoints_[i].set_priors(priors); }
  /// A config reload: new settings from now on; what the pool has learned and counted (the
  /// endpoints' states and health, the retry budget's window, those waiting, the prediction
  /// errors) stays. The wait queue is off unless the router is the gateway's.
  void Reconfigure(const PoolConfig& config);

  /// A request arrived for this pool at `now` (the retry budget counts it).
  void OnReceived(Seconds now);
  /// Block hashes the prefix index holds for endpoint `i`.
  std::size_t prefix_index_size(std::size_t i) const { return prefixes_.size(i); }

  struct Pick {
    RouteDecision decision;
    bool alone = false;  ///< sent with nothing predicted ahead: its TTFT measures prefill
  };
  /// Routes `request` at `now` (ejections that ended are lifted first); a forward is recorded
  /// as sent (and its prefix blocks as held there). The gateway router admits against the TTFT SLO
  /// less the margin its prediction errors have shown (PredictionErrors; never below half the SLO).
  Pick Route(const RouteRequest& request, Seconds now);

  /// How a request was placed (Admit) or left the wait queue (DispatchNext).
  struct Placement {
    enum class Kind : std::uint8_t {
      kRouted,   ///< `pick` says: forwarded (recorded as sent) or refused (429 / 503)
      kQueued,   ///< waiting for a slot (Admit only)
      kExpired,  ///< its wait reached its TTL: 429 queue_deadline_exceeded in `pick`
    };
    Kind kind = Kind::kRouted;
    Ticket ticket = 0;
    Pick pick;
    Seconds waited_s = 0;   ///< time spent in the wait queue
    Seconds expires_s = 0;  ///< kQueued: when its wait ends at the latest
    RouteRequest request;   ///< DispatchNext: the request as it arrived (for its retries)
  };
  /// A request that arrived at `now` (after OnReceived): routed at once; or, with the gateway
  /// router and the wait queue on, queued when no endpoint can meet its TTFT SLO now but one
  /// could on its own (its prefill alone fits) and the queue has room, or when requests as
  /// urgent already wait (arrivals do not overtake them; refused when the queue is full).
  /// A request that may not wait (RouteRequest::may_wait) is refused where it would queue.
  /// With fair shedding on, a request of a flow that must yield (FairShare::ShouldYield) is
  /// refused 429 fair_share first; every forward (Route) counts as its flow's admission, and a
  /// refusal for load or an expired wait as its contention.
  Placement Admit(Ticket ticket, const RouteRequest& request, Seconds now);
  /// The next waiting request that leaves the queue at `now`: expired, or routed with what is
  /// left of its TTFT budget (forwarded, or refused when no endpoint takes work); nullopt when
  /// the next one must keep waiting or none waits.
  std::optional<Placement> DispatchNext(Seconds now);
  /// The client of waiting `ticket` left: it leaves the queue. False when it was not waiting.
  bool CancelWaiting(Ticket ticket) { return queue_.Remove(ticket).has_value(); }
  /// Waiting `ticket`'s wait ran out by the driver's timer (DispatchNext expires it too, at the
  /// next event): it leaves the queue expired. Nullopt when it was not waiting.
  std::optional<Placement> ExpireWaiting(Ticket ticket, Seconds now);
  /// The endpoint refused a request of `flow` that Route forwarded (fair shedding): its
  /// admission is taken back, and with `for_load` (api::IsRefusalForLoad, which the driver
  /// asks) its flow contends.
  void OnEndpointRefused(const std::string& flow, bool for_load, Seconds now);
  /// The gateway drains: every waiting request leaves the queue refused 503 draining (it was
  /// never sent; another gateway replica may take it).
  std::vector<Placement> DrainWaiting(Seconds now);
  /// Requests in the wait queue.
  std::size_t waiting() const { return queue_.size(); }
  /// The margin subtracted from the TTFT SLO, seconds (0 until learned, and for the baselines).
  Seconds prediction_margin_s() const { return errors_.margin_s(); }
  /// The flows' recent offered and admitted shares (empty with fair shedding off).
  std::vector<FlowShare> FlowShares(Seconds now) const;

  /// After the attempt on `endpoint` failed before the client got a byte, the `attempts`-th
  /// send: adds `endpoint` to request->exclude and says whether to route again now (taking a
  /// budget token when so). `*why` (if not null) says why not.
  bool MayRetry(RouteRequest* request, std::int32_t endpoint, std::int32_t attempts, Seconds now,
                RetryDenial* why = nullptr);

  /// The first token of an attempt sent to `i` came `ttft_s` after the send; the router had
  /// predicted `predicted_ttft_s` (0: no prediction, as the baselines make none).
  void OnFirstToken(std::size_t i, std::int32_t prompt_tokens, Seconds ttft_s, bool alone,
                    Seconds predicted_ttft_s);
  /// The attempt sent to `i` ended at `now` (`completed`: relayed to its end).
  void OnFinish(std::size_t i, Seconds now, bool completed);
  /// The attempt of `request` sent to `i` ended before the endpoint started it (refused,
  /// unreachable, an error answer): its prompt blocks are no longer believed held there
  /// (PrefixIndex::Drop).
  void OnNotStarted(std::size_t i, const RouteRequest& request);
  void OnScrape(std::size_t i, const EndpointLoad& load, Seconds now);

  void OnProbe(std::size_t i, ProbeResult result, Seconds now);
  /// The endpoint answered 503 draining.
  void OnDraining(std::size_t i, Seconds now);
  /// A connect error, reset, or a 5xx that is not a refusal.
  void OnError(std::size_t i, Seconds now);
  /// An answer, or a refusal of the overload contract.
  void OnSuccess(std::size_t i);

  EndpointHealth HealthAt(std::size_t i, Seconds now) const { return health_.HealthAt(i, now); }
  /// Whether `i`'s metrics are stale at `now` (it exports metrics and they are too old).
  bool Stale(std::size_t i, Seconds now) const;
  /// The pool's drain time (Router::DrainTime).
  Seconds DrainTime(Seconds now) const { return router_.DrainTime(endpoints_, now); }

 private:
  void Refresh(std::size_t i, Seconds now) { endpoints_[i].set_health(health_.HealthAt(i, now)); }
  /// Whether `request` could meet `slo_s` on some endpoint that takes work with nothing ahead
  /// of it (its prefill alone fits): only then is waiting worth it.
  bool FitsAlone(const RouteRequest& request, Seconds slo_s) const;
  /// 429 queue_deadline_exceeded, Retry-After the pool's drain time.
  Pick ExpiredPick(Seconds now) const;
  /// How `entry`, just removed from the queue, left it at `now`.
  static Placement Left(Placement::Kind kind, const WaitQueue::Entry& entry, const Pick& pick,
                        Seconds now);

  static WaitQueueConfig QueueSettings(const PoolConfig& config);
  /// Counts a refusal for load of a request of `flow` in `placement` (fair shedding; forwards
  /// are counted by Route).
  void CountFlow(const std::string& flow, const Placement& placement, Seconds now);

  Router router_;
  std::vector<EndpointState> endpoints_;
  PoolHealth health_;
  RetryConfig retry_;
  RetryBudget budget_;
  WaitQueue queue_;
  PredictionErrors errors_;  // the gateway router's TTFT prediction errors and margin
  FairShare fair_share_;
  PrefixIndex prefixes_;  // what each endpoint is believed to hold (prefix-aware routing)
};

}  // namespace spillway::routing
