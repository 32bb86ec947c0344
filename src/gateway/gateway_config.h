#pragma once
// Configuration of `spillway gateway`: the listener, the router (routing/router.h), how often
// endpoints are scraped and probed, the deadline and retries, and the pools: per model, the
// upstream endpoints (URL and kind). Typed and validated once at start-up. Every key can come
// from the YAML file (--config) or, for the common ones, a flag; flags win. Defaults run out
// of the box on loopback. docs/gateway.md lists every key.
//
//   listen:  {host, port, threads, max_connections, max_body_bytes}
//   router:  {policy, ttft_slo_s, stale_after_s, staleness, seed, prediction_quantile}
//   scrape:  {interval_s, timeout_s}
//   timeouts: {request_timeout_s, connect_timeout_s, drain_timeout_s}
//   retries: {max_attempts, budget_ratio, budget_window_s, min_retries}
//   queue:   {max_wait_s, standing_max_wait_s, max_queued, aging_s}
//   health:  {probe_interval_s, eject_after_errors, eject_base_s, max_ejected_fraction}
//   cascade: {order: [cache, primary, clamp, fallback, reject]}
//   cache:   {max_entries, max_bytes, ttl_s, max_entry_bytes}
//   pools:   [{model: NAME, fallbacks: [MODEL, ...], degrade_max_tokens, degrade_ttft_fraction,
//             endpoints: [{url: URL, kind: KIND, max_running, service_rate_rps,
//             prefill_tokens_per_s}]}]
//   api_keys: [{key, tenant, rate_rps, burst, max_priority, cascade, cache}] (serve's, and
//             cascade and cache)

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/server_config.h"
#include "routing/cascade.h"
#include "routing/endpoint_state.h"
#include "routing/engine_metrics.h"
#include "routing/pool.h"
#include "routing/result_cache.h"

namespace spillway::gateway {

/// One upstream: its base URL (http://host:port[/prefix]), what kind of engine it is (nullopt:
/// detected from its /metrics at the first scrape), and what admission assumes of it until it
/// has measured it: keys max_running, service_rate_rps and prefill_tokens_per_s (defaults 16,
/// 10 and 4,000). An endpoint without metrics (kind openai) never reports its batch, so its
/// max_running stays the one given: set it to the engine's batch (vLLM's --max-num-seqs) or a
/// hosted API's concurrency limit, or the gateway queues (and refuses) past 16 in flight plus
/// what the measured completion rate drains within the TTFT SLO.
struct UpstreamConfig {
  std::string url;
  std::optional<routing::EngineKind> kind;
  routing::EndpointPriors priors{};
  bool max_running_given = false;  ///< priors.max_running came from the config
};

/// The endpoints that serve one model. An empty model name: discovered at start-up from the
/// endpoints' GET /v1/models. `fallbacks`: the model cascade (routing/cascade.h), the models
/// of other pools, in order, that take a request this pool refuses for load. `degrade`: the
/// max_tokens clamp above the pool's load threshold (keys degrade_max_tokens, 0 = off, and
/// degrade_ttft_fraction, 0.5), in the cascade's clamp step.
struct PoolConfig {
  std::string model;
  std::vector<UpstreamConfig> endpoints;
  std::vector<std::string> fallbacks = {};
  routing::DegradeConfig degrade = {};
};

/// Where and how the tenants' quotas (the keys' rate_rps, tokens_per_s and retry_rps) are
/// decided (gateway/shared_quota.h). Restart-only: a reload keeps the running value.
struct RateLimitConfig {
  /// redis://IP[:PORT] or unix:///PATH: the Redis every gateway of the deployment shares;
  /// empty: this gateway decides alone (the request rate in its own bucket, the token and
  /// retry rates in its memory).
  std::string redis;
  /// How long a request waits for Redis's decision before the unavailable mode decides it.
  Seconds decision_budget_s = 0.005;
  /// Redis unreachable or over budget: fail_open (the local quotas at each rate divided by the
  /// number of gateways), or fail_close (429 rate_limiter_unavailable).
  bool fail_open = true;
  /// The gateways fail-open divides by before Redis has counted them (each gateway registers
  /// itself every second).
  std::int32_t gateways = 1;
  std::string key_prefix = "spillway";
  /// A request seen again within this window (same Idempotency-Key, or same body, same
  /// tenant) is a retry.
  Seconds retry_window_s = 10;
  /// The reservation's max_tokens for a request that gives none (corrected by its usage).
  std::int32_t reserve_max_tokens = 256;
  /// The request-rate algorithm in Redis: gcra, or fixed_window (one-second windows, as
  /// Envoy's ratelimit service counts: kept for comparison, allows up to twice the rate across
  /// a window edge).
  bool fixed_window = false;

  bool shared() const { return !redis.empty(); }
  bool operator==(const RateLimitConfig&) const = default;
};

struct GatewayConfig {
  /// The routing core's settings of every pool.
  routing::PoolConfig PoolSettings() const {
    return {router, health, retry, queue, prediction, fair_share};
  }

  // Listener.
  std::string host = "127.0.0.1";
  std::uint16_t port = 8080;
  std::int32_t threads = 0;  ///< 0 = one per core
  std::int32_t max_connections = 4096;
  std::size_t max_body_bytes = 1 << 20;

  routing::RouterConfig router;
  /// The gateway router admits against the TTFT SLO less this quantile of its recent TTFT
  /// prediction errors (router.prediction_quantile, 0.95; 0: off; admission/prediction_errors.h).
  PredictionErrorConfig prediction;
  /// Fair shedding across each pool's flows (router.fair_share_min_ratio, _window_s; off by
  /// default).
  FairShareConfig fair_share;
  double scrape_interval_s = 0.25;  ///< GET /metrics of every endpoint this often
  double scrape_timeout_s = 0.5;    ///< a scrape not answered by then failed

  /// The gateway's deadline for a request: the lesson's API-gateway tier (4.5 s, between the
  /// client's 5 s and the queue-ingress 1 s; overload-and-failure-handling.txt §3.2). At it:
  /// 504 request_timeout (or an SSE error event once streaming) and the upstream is closed.
  double request_timeout_s = 4.5;
  double connect_timeout_s = 0.5;
  double drain_timeout_s = 30;  ///< SIGTERM: in-flight requests get this long

  /// Retries (routing/pool.h): only before the first byte reached the client, never on an
  /// endpoint already tried for the request, at most retry.max_attempts sends in all, and
  /// within the budget: retries may add at most retry.budget_ratio of the requests of the last
  /// retry.budget_window_s (Envoy's retry budget; Google SRE book ch. 22), but
  /// retry.min_retries are always allowed in a window.
  routing::RetryConfig retry;

  /// The gateway router's wait queue (routing/wait_queue.h): a request no endpoint can start
  /// within its TTFT SLO now waits up to queue.max_wait_s (0, the default: refused at once)
  /// for a slot, at most queue.max_queued per pool, most urgent class first, aging one class per
  /// queue.aging_s; once the queue has not emptied for max_wait_s, newest first and at most
  /// queue.standing_max_wait_s; past its wait, 429 queue_deadline_exceeded.
  routing::WaitQueueConfig queue;

  /// Health (routing/endpoint_health.h): /ready probed every probe_interval_s (503 or a
  /// refused connection: no new work); passive ejection after health.eject_after_errors
  /// consecutive connect errors or 5xx answers other than a refusal, for health.eject_base_s
  /// doubling at each re-ejection (Envoy's outlier detection), never more than
  /// health.max_ejected_fraction of a pool at once.
  double probe_interval_s = 0.5;
  routing::HealthConfig health;

  std::vector<PoolConfig> pools;
  /// The steps a request is offered to in turn (routing/cascade.h): cascade.order.
  std::vector<routing::CascadeStep> cascade_order = routing::DefaultCascadeOrder();
  /// The exact-result cache (routing/result_cache.h): off unless cache.max_entries > 0.
  routing::ResultCacheConfig cache;

  /// Tenant quotas shared across gateways (gateway/shared_quota.h): rate_limit.*.
  RateLimitConfig rate_limit;

  /// Clients' API keys, as `spillway serve` reads them: with any configured, every completion
  /// request names one (401 otherwise); a key's tenant gets a token bucket of rate_rps and
  /// burst (the first key of a tenant sets it; 429 rate_limited with X-RateLimit-Reset when
  /// empty), and X-Priority-Class is never more urgent than its max_priority. The client's
  /// Authorization header is passed on to the endpoint. Empty: no authentication, tenant
  /// "default" without a bucket.
  std::map<std::string, server::ApiKey> api_keys;
};

/// Loads `path` (may be empty: defaults only). Throws config::ConfigError naming the file,
/// line, field and value for an unknown key, a wrong type or a value out of range.
GatewayConfig LoadGatewayConfig(const std::string& path);
/// The same from YAML text (tests); `origin` names it in errors.
GatewayConfig LoadGatewayConfigFromString(const std::string& yaml, const std::string& origin);

/// Checks the merged config (file and flags): at least one endpoint, every URL an http:// URL
/// with a host and a port or the default 80, no endpoint twice, models unique, every fallback
/// the model of another pool (once in a chain), the timeout order request_timeout_s >
/// router.ttft_slo_s. `origin` names where the values came from.
/// Throws config::ConfigError.
void ValidateGatewayConfig(const GatewayConfig& config, const std::string& origin);

/// Parses "--endpoint" values: "URL" or "KIND=URL" (KIND as routing::ParseEngineKind).
/// Throws config::ConfigError naming the value.
UpstreamConfig ParseEndpointFlag(const std::string& value);

}  // namespace spillway::gateway
