#pragma once
// One model's pool of upstream endpoints as the live gateway holds it: the pure routing core
// (routing::Router, one routing::EndpointState per endpoint, routing::PoolHealth) behind a
// mutex, fed by the request sessions, the scrapers and the probes of every I/O thread. Every
// call is short (no I/O under the lock). Times are SteadyClock seconds.

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gateway/gateway_config.h"
#include "net/http_get.h"
#include "net/target.h"
#include "routing/endpoint_health.h"
#include "routing/endpoint_state.h"
#include "routing/engine_metrics.h"
#include "routing/router.h"

namespace spillway::gateway {

/// Where an endpoint is and what it is; fixed once the pool is built (the kind may be learned
/// at the first scrape: EndpointPool::Kind).
struct Upstream {
  std::string url;
  net::Target target;
  net::Endpoints addresses;
  std::optional<routing::EngineKind> kind;
};

/// One endpoint's state for /metrics.
struct EndpointView {
  std::string url;
  routing::EndpointHealth health = routing::EndpointHealth::kHealthy;
  bool stale = false;
  Seconds metrics_age_s = 0;  ///< +inf before the first scrape or without metrics
  std::int32_t in_flight = 0;
  routing::EndpointLoad load;
  std::int32_t ejections = 0;
};

class EndpointPool {
 public:
  EndpointPool(std::string model, std::vector<Upstream> upstreams, const GatewayConfig& config);

  const std::string& model() const { return model_; }
  std::size_t size() const { return upstreams_.size(); }
  const Upstream& upstream(std::size_t i) const { return upstreams_[i]; }

  /// A routing decision for `request` at `now`; a forward is recorded as sent (OnForward).
  /// `alone` says nothing was predicted ahead of it there (its TTFT then measures prefill).
  struct Pick {
    routing::RouteDecision decision;
    bool alone = false;
  };
  Pick Route(const routing::RouteRequest& request, Seconds now);

  /// Whether an endpoint not in `exclude` takes work at `now` (a retry has somewhere to go).
  bool AnyEligible(const std::vector<std::int32_t>& exclude, Seconds now) const;

  void OnFirstToken(std::size_t i, std::int32_t prompt_tokens, Seconds ttft_s, bool alone);
  /// The request sent to `i` ended (`completed`: relayed to its end).
  void OnFinish(std::size_t i, Seconds now, bool completed);

  /// A scrape's exposition (parsed by the caller): the load, and the kind when not known.
  /// False when it held no load the kind's names describe (counted as a failed scrape).
  bool OnScrape(std::size_t i, const metrics::Exposition& exposition, Seconds now);
  std::optional<routing::EngineKind> Kind(std::size_t i) const;

  void OnProbe(std::size_t i, routing::ProbeResult result, Seconds now);
  void OnDraining(std::size_t i, Seconds now);
  void OnError(std::size_t i, Seconds now);
  void OnSuccess(std::size_t i);

  std::vector<EndpointView> View(Seconds now) const;
  /// The pool's drain time, seconds (Retry-After for a refusal made after the route, e.g. a
  /// failed retry): requests ahead over the healthy endpoints' service rates; at least 1.
  Seconds DrainTime(Seconds now) const;

 private:
  void RefreshHealth(std::size_t i, Seconds now);  // caller holds mu_

  std::string model_;
  std::vector<Upstream> upstreams_;
  mutable std::mutex mu_;
  routing::Router router_;
  std::vector<routing::EndpointState> states_;
  routing::PoolHealth health_;
  std::vector<std::optional<routing::EngineKind>> kinds_;
};

}  // namespace spillway::gateway
