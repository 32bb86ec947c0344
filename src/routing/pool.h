#pragma once
// One model's pool as the gateway's first stage sees it, whole: the Router, one EndpointState
// per endpoint, their health (PoolHealth: probes and passive ejection) and the retry budget.
// The live gateway (gateway/endpoint_pool.h, behind a mutex) and the simulator
// (sim/gateway_front.h) drive this same object with the same events, so every routing, health
// and retry decision the gateway makes live can be simulated. Pure: `now` is passed in; no
// clock, no I/O. Not thread-safe.
//
// A request's life: OnReceived; Route (a forward is recorded as sent); the attempt ends with
// OnFinish (and OnFirstToken when it streamed); after an attempt that failed before the client
// got a byte (the endpoint refused or could not be reached), MayRetry says whether to route
// again (with the tried endpoints excluded).

#include <cstdint>
#include <vector>

#include "routing/endpoint_health.h"
#include "routing/endpoint_state.h"
#include "routing/retry_budget.h"
#include "routing/router.h"

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

  /// A request arrived for this pool at `now` (the retry budget counts it).
  void OnReceived(Seconds now);

  struct Pick {
    RouteDecision decision;
    bool alone = false;  ///< sent with nothing predicted ahead: its TTFT measures prefill
  };
  /// Routes `request` at `now` (ejections that ended are lifted first); a forward is recorded
  /// as sent.
  Pick Route(const RouteRequest& request, Seconds now);

  /// After the attempt on `endpoint` failed before the client got a byte, the `attempts`-th
  /// send: adds `endpoint` to request->exclude and says whether to route again now (taking a
  /// budget token when so). `*why` (if not null) says why not.
  bool MayRetry(RouteRequest* request, std::int32_t endpoint, std::int32_t attempts, Seconds now,
                RetryDenial* why = nullptr);

  void OnFirstToken(std::size_t i, std::int32_t prompt_tokens, Seconds ttft_s, bool alone);
  /// The attempt sent to `i` ended at `now` (`completed`: relayed to its end).
  void OnFinish(std::size_t i, Seconds now, bool completed);
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

  Router router_;
  std::vector<EndpointState> endpoints_;
  PoolHealth health_;
  RetryConfig retry_;
  RetryBudget budget_;
};

}  // namespace spillway::routing
