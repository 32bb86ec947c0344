#pragma once
// The gateway's HTTP routes: POST /v1/completions and /v1/chat/completions (validated as
// `serve` validates them, routed by the pool's Router, relayed with retries), GET /v1/models
// (the union of the pools), /health, /ready and /metrics.
//
// One overload contract with `serve` (api/overload_contract.h): the gateway's own refusals are
// 429 queue_delay_exceeded (no endpoint can meet the TTFT SLO; Retry-After from the pool's
// drain time), 503 no_endpoint (none takes work), 503 upstream_unavailable (the endpoint
// failed and no other could be tried), 503 draining, 504 request_timeout; an endpoint's own
// refusal is passed on as it sent it (status, body, Retry-After, X-Overload-Reason) when no
// retry is made; with the wait queue on (queue.max_wait_s > 0), a request no endpoint can start
// now may wait for a slot first, and is 429 queue_deadline_exceeded when its wait runs out.
// Request headers honoured: X-Priority-Class (as serve's), x-llm-d-slo-ttft-ms
// (the request's TTFT SLO), X-Spillway-Cascade (off: no fallback model).
//
// The model cascade (routing/cascade.h): a request its model's pool refuses for load goes on to
// the pool's fallbacks in order, its body's `model` the fallback's, with what is left of its TTFT
// SLO; the answer says which model served it (X-Spillway-Served-Model on every relayed answer,
// and X-Degraded: cascade when it was a fallback). A key with `cascade: deny` is never sent on.
//
// The tenants' quotas (gateway/shared_quota.h): the request rate in the door's bucket at the
// request's head (and, with rate_limit.redis, across every gateway in Redis), the token and
// retry rates once the body is read (429 rate_limited, token_rate_limited,
// retry_rate_limited, or rate_limiter_unavailable when Redis is down and the gateway fails
// closed); a token reservation is corrected by the reply's usage. Every 429 is counted by
// tenant.
//
// A request takes the gateway's config and pools once, at its arrival (LiveState), and keeps
// them to its end: a config reload applies to the requests that arrive after it.

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "admission/admission.h"
#include "api/openai_types.h"
#include "api/tokenizer.h"
#include "gateway/endpoint_pool.h"
#include "gateway/gateway_config.h"
#include "gateway/gateway_metrics.h"
#include "gateway/live_state.h"
#include "gateway/relay.h"
#include "gateway/shared_quota.h"
#include "net/clock.h"
#include "net/http_connection.h"
#include "net/http_server.h"

namespace spillway::gateway {

class GatewayHandler {
 public:
  /// All references must outlive the handler; `state` must hold a state already; `draining`
  /// is set by the signal handler. The tenant quotas' Redis client and heartbeat run on
  /// `executor`.
  GatewayHandler(const boost::asio::any_io_executor& executor, const LiveState& state,
                 GatewayMetrics& metrics, const net::SteadyClock& clock,
                 const std::atomic<bool>& draining);

  /// A config reload changed the config from `before` to `after` (called before the new state
  /// is set): when the API keys changed, the tenants' buckets are made anew (full).
  void OnReload(const GatewayConfig& before, const GatewayConfig& after);

  /// The refusals a completion request's head decides, before its body is read or parsed
  /// (net::HttpServer::HeadHandler), in serve's order: 401 invalid_api_key, 411
  /// length_required, 400 invalid_priority, 503 draining, 429 rate_limited (the key's tenant's
  /// token bucket, which this spends); nullopt for any other request. (No endpoint needs the pool,
  /// named by the body's model: decided after the parse.) Thread-safe.
  std::optional<net::EarlyReply> Head(const net::Request& head);

  boost::asio::awaitable<void> operator()(net::HttpConnection& conn);

  /// Requests received and not yet ended.
  std::int64_t in_flight() const { return static_cast<std::int64_t>(metrics_.in_flight->value()); }
  /// Ends every attempt in progress (a drain out of time): 503 draining, or an SSE error event.
  void EndAllAttempts() { relays_.CloseAll(); }

 private:
  boost::asio::awaitable<void> Completions(net::HttpConnection& conn, bool chat);
  struct Exchange;  // a completion request on its way through its cascade (exchange.h)
  struct Refusal;   // a pool's refusal, not yet sent (exchange.h)
  /// Places the request of `x` on `pool` (at once or after a wait in its queue) and relays it,
  /// with retries on the pool's other endpoints. Nullopt when the request ended there (an
  /// answer relayed, an error sent, the client gone); else the pool's refusal, not yet sent.
  boost::asio::awaitable<std::optional<Refusal>> OnPool(Exchange& x, EndpointPool& pool);
  /// Sends refusal `r` of the last pool tried and ends the request.
  boost::asio::awaitable<void> SendRefusal(Exchange& x, const Refusal& r);
  /// Sends `answer` from the exact-result cache (X-Cache: hit) and ends the request.
  boost::asio::awaitable<void> SendCached(Exchange& x, routing::CachedAnswer answer);
  /// The cache's entries and bytes gauges, as `cache` holds them now.
  void CacheGauges(const routing::ResultCache& cache);
  /// Waits in `pool`'s queue until `ticket` leaves it (routed or expired) or its client
  /// leaves (nullopt; an attempt routed meanwhile is ended at its endpoint).
  boost::asio::awaitable<std::optional<routing::Pool::Placement>> WaitInQueue(
      net::HttpConnection& conn, EndpointPool& pool, routing::Ticket ticket,
      std::shared_ptr<Waiter> waiter, Seconds expires_s);
  /// The gateway's own refusal for a decision that did not forward: the router's (429
  /// queue_delay_exceeded, 503 no_endpoint), the wait queue's (429 queue_deadline_exceeded after
  /// `waited_s`, 503 draining), or, `after_attempts`, 503 upstream_unavailable.
  static api::ApiError RefusalError(const routing::RouteDecision& d, bool after_attempts,
                                    const std::string& model, Seconds waited_s,
                                    const GatewayConfig& config);
  boost::asio::awaitable<void> SendError(net::HttpConnection& conn, const api::ApiError& error,
                                         const net::Headers& headers = {});
  /// The pool of `model` in `state` (the only one when `model` is empty and there is one).
  static std::shared_ptr<EndpointPool> PoolFor(const GatewayState& state, std::string_view model);

  const LiveState& state_;
  GatewayMetrics& metrics_;
  const net::SteadyClock& clock_;
  const std::atomic<bool>& draining_;
  api::ApproxTokenizer tokenizer_;
  std::mutex door_mu_;
  /// The tenants' token buckets (admission's, as the simulator's door), under door_mu_.
  std::optional<AdmissionController> door_;
  /// The exact-result cache (null: off), under door_mu_ (a reload that changes its config
  /// starts an empty one).
  std::shared_ptr<routing::ResultCache> cache_;
  std::shared_ptr<routing::ResultCache> Cache();
  /// The tenants' quotas and their limits (under door_mu_; made anew when the keys change).
  std::unique_ptr<SharedQuota> quota_;
  std::map<std::string, TenantQuotaLimits, std::less<>> quota_limits_;
  TenantQuotaLimits QuotaLimitsFor(std::string_view tenant);
  /// Decides the tenant quotas of the completion request on `conn` of `key`'s tenant,
  /// reserving `reserved_tokens`: true when allowed (`charged_tokens` set to what the token
  /// limit spent); else false, the refusal sent.
  boost::asio::awaitable<bool> DecideQuota(net::HttpConnection& conn, const std::string& model,
                                           const server::ApiKey& key,
                                           const TenantQuotaLimits& limits, double reserved_tokens,
                                           double* charged_tokens);
  RelayRegistry relays_;
  std::atomic<routing::Ticket> next_ticket_{1};
};

}  // namespace spillway::gateway
