#pragma once
// One model's pool of upstream endpoints as the live gateway holds it: the routing core's
// routing::Pool (Router, endpoint states, health, retry budget: the object the simulator
// drives too) behind a mutex, fed by the request sessions, the scrapers and the probes of every
// I/O thread, plus where each endpoint is and what kind of engine it runs. Every call is short
// (no I/O under the lock). Times are SteadyClock seconds.
//
// A config reload (Update) adds endpoints and removes others: an endpoint keeps its index for
// the pool's life; one removed gets no new work, its in-flight requests finish, and its scrape
// and probe loops end (Watched); one added back takes its old index again.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <map>
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

/// Where an endpoint is and what it is; fixed while it is in the pool (the kind may be learned
/// at the first scrape: EndpointPool::Kind).
struct Upstream {
  std::string url;
  net::Target target;
  net::Endpoints addresses;
  std::optional<routing::EngineKind> kind;
  routing::EndpointPriors priors{};  ///< UpstreamConfig::priors
  bool max_running_given = false;    ///< UpstreamConfig::max_running_given
  /// Its idle keep-alive connections, shared by every session.
  std::shared_ptr<ConnectionCache> connections = std::make_shared<ConnectionCache>();
};

/// A request waiting in a pool's wait queue (routing/wait_queue.h), shared by its session and
/// the pool: the session waits on `timer` (set to its TTL); the pool, when the request leaves
/// the queue, sets `placement` under its lock and cancels the timer on the session's strand.
struct Waiter {
  explicit Waiter(const boost::asio::any_io_executor& strand) : timer(strand) {}
  boost::asio::steady_timer timer;                    ///< touched on the session's strand only
  std::optional<routing::Pool::Placement> placement;  ///< guarded by the pool's lock
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
  /// Endpoints ever in the pool, removed ones included (their indexes stay).
  std::size_t size() const;
  /// Where endpoint `i` is (kept alive by the caller across a reload that replaces it).
  std::shared_ptr<const Upstream> upstream(std::size_t i) const;

  /// A config reload: the pool's endpoints become `wanted` and its settings `config`'s. An
  /// endpoint is known by its host, port and base path (net::Target::Key), whatever the
  /// spelling of its URL. Endpoints not wanted are removed (no new work; in-flight requests
  /// finish); new ones are added; ones removed before and wanted again come back; one whose
  /// configured kind or resolved addresses changed is restarted with them (its loops anew, what
  /// was measured of it kept). Those waiting are routed again (503 no_endpoint once no
  /// endpoint is left). Returns the endpoints whose scrape and probe loops must start.
  struct Started {
    std::size_t endpoint = 0;
    std::uint64_t generation = 0;
  };
  struct Changes {
    std::vector<Started> started;  ///< added, added back or changed
    std::size_t added = 0;
    std::size_t removed = 0;
    std::size_t changed = 0;
  };
  Changes Update(std::vector<Upstream> wanted, const GatewayConfig& config, Seconds now);
  /// The generation of endpoint `i`: a scrape or probe loop started for it lives while
  /// Watched(i, generation) (it is in the pool and was not removed and added back since).
  std::uint64_t generation(std::size_t i) const;
  bool Watched(std::size_t i, std::uint64_t generation) const;
  /// Endpoints in the pool (not removed).
  std::size_t active() const;
  /// A config reload removed the pool's model: no request arrives any more (the caller drops
  /// the pool from the state); those waiting in its queue still leave it as they would (sent,
  /// or refused when their wait runs out), and once none waits, every endpoint is removed.
  void Retire(Seconds now);

  // The routing core's calls (routing/pool.h), under the lock. Each call that may free a slot
  // (an attempt's end, a scrape, a probe, a health change, an arrival that queued) then lets
  // whoever can leave the wait queue go, waking their sessions.
  void OnReceived(Seconds now);
  /// Routes at once, or queues (kQueued: `waiter` is woken when it leaves; call Resolve then).
  /// `waiter` may be null when the pool's queue is off (it never queues then).
  routing::Pool::Placement Admit(routing::Ticket ticket, const routing::RouteRequest& request,
                                 Seconds now, const std::shared_ptr<Waiter>& waiter);
  /// After the waiter woke (its timer fired or was cancelled, or its client left): how `ticket`
  /// left the queue (routed, or expired when its wait ran out). When `client_gone`, it leaves
  /// the queue and nullopt is returned, unless it had been routed already (the caller then ends
  /// that attempt).
  std::optional<routing::Pool::Placement> Resolve(routing::Ticket ticket, Waiter& waiter,
                                                  bool client_gone, Seconds now);
  std::size_t waiting() const;
  /// The gateway drains: every waiting request is woken refused 503 draining.
  void DrainWaiting(Seconds now);
  /// The margin the gateway router subtracts from the TTFT SLO (routing::Pool).
  Seconds prediction_margin_s() const;
  routing::Pool::Pick Route(const routing::RouteRequest& request, Seconds now);
  bool MayRetry(routing::RouteRequest* request, std::int32_t endpoint, std::int32_t attempts,
                Seconds now, routing::RetryDenial* why);
  void OnFirstToken(std::size_t i, std::int32_t prompt_tokens, Seconds ttft_s, bool alone,
                    Seconds predicted_ttft_s);
  void OnFinish(std::size_t i, Seconds now, bool completed);
  void OnNotStarted(std::size_t i, const routing::RouteRequest& request);
  void OnProbe(std::size_t i, routing::ProbeResult result, Seconds now);
  void OnDraining(std::size_t i, Seconds now);
  void OnError(std::size_t i, Seconds now);
  void OnSuccess(std::size_t i);
  void OnEndpointRefused(const std::string& flow, bool for_load, Seconds now);
  Seconds DrainTime(Seconds now) const;

  /// A scrape's exposition: the load, and the kind when not known yet. False when it held no
  /// load the kind's names describe (counted as a failed scrape).
  bool OnScrape(std::size_t i, const metrics::Exposition& exposition, Seconds now);
  std::optional<routing::EngineKind> Kind(std::size_t i) const;
  /// Endpoint `i`'s state as the router sees it now (a copy).
  routing::EndpointState Endpoint(std::size_t i) const;

  /// Every endpoint in the pool, and those removed while requests to them are in flight.
  std::vector<EndpointView> View(Seconds now) const;

 private:
  /// Lets out of the wait queue whoever can go at `now`; under the lock.
  void DispatchLocked(Seconds now);
  /// Hands `p` to its waiter and wakes it; under the lock.
  void WakeLocked(routing::Pool::Placement p);
  /// A retired pool with nobody waiting: every endpoint removed; under the lock.
  void RemoveAllIfRetiredLocked(Seconds now);

  std::string model_;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<const Upstream>> upstreams_;
  routing::Pool pool_;
  std::vector<std::optional<routing::EngineKind>> kinds_;
  std::vector<std::uint64_t> generations_;
  bool retired_ = false;
  std::map<routing::Ticket, std::shared_ptr<Waiter>> waiters_;  // those in the wait queue
};

}  // namespace spillway::gateway
