#pragma once
// One model's pool of upstream endpoints as the live gateway holds it: the routing core's
// routing::Pool (Router, endpoint states, health, retry budget: the object the simulator
// drives too) behind a mutex, fed by the request sessions, the scrapers and the probes of every
// I/O thread, plus where each endpoint is and what kind of engine it runs. Every call is short
// (no I/O under the lock). Times are SteadyClock seconds.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gateway/connection_cache.h"
#include "gateway/gateway_config.h"
#include "metrics/prometheus_text.h"
#include "net/http_get.h"
#include "net/target.h"
#include "routing/engine_metrics.h"
#include "routing/pool.h"

namespace spillway::gateway {

/// Where an endpoint is and what it is; fixed once the pool is built (the kind may be learned
/// at the first scrape: EndpointPool::Kind).
struct Upstream {
  std::string url;
  net::Target target;
  net::Endpoints addresses;
  std::optional<routing::EngineKind> kind;
  /// Its idle keep-alive connections, shared by every session.
  std::shared_ptr<ConnectionCache> connections = std::make_shared<ConnectionCache>();
};

/// One endpoint's state for /metrics.
struct EndpointView {
  std::string url;
  routing::EndpointHealth health = routing::EndpointHealth::kHealthy;
  bool stale = false;
  Seconds metrics_age_s = 0;  ///< +inf before the first scrape or without metrics
  std::int32_t in_flight = 0;
  routing::EndpointLoad load;
};

class EndpointPool {
 public:
  EndpointPool(std::string model, std::vector<Upstream> upstreams, const GatewayConfig& config);

  const std::string& model() const { return model_; }
  std::size_t size() const { return upstreams_.size(); }
  const Upstream& upstream(std::size_t i) const { return upstreams_[i]; }

  // The routing core's calls (routing/pool.h), under the lock.
  void OnReceived(Seconds now);
  routing::Pool::Pick Route(const routing::RouteRequest& request, Seconds now);
  bool MayRetry(routing::RouteRequest* request, std::int32_t endpoint, std::int32_t attempts,
                Seconds now, routing::RetryDenial* why);
  void OnFirstToken(std::size_t i, std::int32_t prompt_tokens, Seconds ttft_s, bool alone);
  void OnFinish(std::size_t i, Seconds now, bool completed);
  void OnProbe(std::size_t i, routing::ProbeResult result, Seconds now);
  void OnDraining(std::size_t i, Seconds now);
  void OnError(std::size_t i, Seconds now);
  void OnSuccess(std::size_t i);
  Seconds DrainTime(Seconds now) const;

  /// A scrape's exposition: the load, and the kind when not known yet. False when it held no
  /// load the kind's names describe (counted as a failed scrape).
  bool OnScrape(std::size_t i, const metrics::Exposition& exposition, Seconds now);
  std::optional<routing::EngineKind> Kind(std::size_t i) const;

  std::vector<EndpointView> View(Seconds now) const;

 private:
  std::string model_;
  std::vector<Upstream> upstreams_;
  mutable std::mutex mu_;
  routing::Pool pool_;
  std::vector<std::optional<routing::EngineKind>> kinds_;
};

}  // namespace spillway::gateway
