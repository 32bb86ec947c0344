#pragma once
// Every metric `spillway gateway` exposes on /metrics (`spillway_gateway_*`), declared in one
// place. Conservation: received == shed + in_flight + completed + failed + cancelled at every
// moment (routing::RouteLedger), exported as its five counters and the in-flight gauge.
// Per-pool and per-endpoint gauges are refreshed from the pools when /metrics is rendered
// (series of a pool or endpoint a reload removed vanish once its last request ended).

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gateway/endpoint_pool.h"
#include "metrics/metrics.h"
#include "server/process_metrics.h"

namespace spillway::gateway {

struct GatewayMetrics {
  GatewayMetrics();

  /// The exposition for GET /metrics, with the endpoint gauges of `pools` at `now`.
  std::string Render(const std::vector<std::shared_ptr<EndpointPool>>& pools, Seconds now);

  metrics::Registry registry;

  /// Replies to the completion routes by status, reason and who decided (`by`: gateway,
  /// endpoint, client). Reason: the X-Overload-Reason or error code; "ok" for a relayed 200,
  /// "relayed" for another status relayed as the endpoint sent it, "client_gone" (status 499,
  /// nginx's) when the client left. A 200 whose stream ended in an SSE error event counts
  /// under the event's code. `model` is empty for replies made before a pool was chosen.
  metrics::Family<metrics::Counter>* requests_total;  ///< {model, status, reason, by}
  // The ledger.
  metrics::Counter* received_total;
  /// Valid requests refused by the router or the wait queue (429, 503); the door's refusals
  /// (GatewayHandler::Head) come before `received` and are in requests_total only.
  metrics::Counter* shed_total;
  metrics::Counter* completed_total;  ///< relayed to the end with status 200
  metrics::Counter* failed_total;     ///< a refusal or error passed on, a deadline, a broken stream
  metrics::Counter* cancelled_total;  ///< the client left
  metrics::Gauge* in_flight;
  metrics::Family<metrics::Counter>* forwarded_total;  ///< attempts sent {model, endpoint}
  /// Prefix-aware routing (routing/prefix_index.h), per attempt sent: its prompt tokens, and
  /// those the endpoint it went to was believed to hold cached (their ratio is the hit rate the
  /// gateway expects; the engines' vllm:prefix_cache_hits_total says what they found).
  metrics::Family<metrics::Counter>* prefix_prompt_tokens_total;   ///< {model}
  metrics::Family<metrics::Counter>* prefix_matched_tokens_total;  ///< {model}
  metrics::Counter* retries_total;
  /// The model cascade (routing/cascade.h): requests sent on to a fallback pool, by the model
  /// asked for and the fallback's, each time one is.
  metrics::Family<metrics::Counter>* cascaded_total;  ///< {model, served_model}
  /// Requests an endpoint answered (relayed, any status), by the model asked for and the model
  /// of the pool that served them: the two differ for a request the cascade sent on.
  metrics::Family<metrics::Counter>* served_total;  ///< {model, served_model}
  /// The cascade's steps (routing/cascade.h): each request counted once, by the step that took
  /// it (primary, clamp, fallback) or `reject` when the last step's refusal was sent.
  metrics::Family<metrics::Counter>* cascade_steps_total;  ///< {model, step}
  /// Requests sent with max_tokens clamped (the clamp step), by the model asked for.
  metrics::Family<metrics::Counter>* max_tokens_clamped_total;  ///< {model}
  /// The exact-result cache (routing/result_cache.h): lookups by result (hit, miss), answers
  /// stored (stored, not_kept), entries evicted to make room, and its size now.
  metrics::Family<metrics::Counter>* cache_lookups_total;  ///< {model, result}
  metrics::Family<metrics::Counter>* cache_stores_total;   ///< {model, result}
  metrics::Counter* cache_evictions_total;
  metrics::Gauge* cache_entries;
  metrics::Gauge* cache_bytes;
  metrics::Family<metrics::Counter>*
      retries_denied_total;  ///< {why: attempts, no_endpoint, budget}
  /// Tenant quotas (gateway/shared_quota.h).
  metrics::Family<metrics::Counter>* tenant_refusals_total;  ///< {tenant, reason}: every 429
  metrics::Family<metrics::Counter>* tenant_retries_total;   ///< {tenant}: requests seen before
  metrics::Family<metrics::Counter>* rate_limit_decisions_total;  ///< {source, result}
  metrics::Family<metrics::Gauge>* rate_limiter_mode;  ///< {mode}: 1 for the mode in force
  metrics::Gauge* rate_limit_gateways;  ///< the gateways sharing the limits, as Redis counts them
  metrics::Histogram* rate_limit_decision_seconds;  ///< a shared decision's round trip
  metrics::Histogram* ttft_seconds;  ///< send to the first relayed bytes of a 200 stream
  metrics::Histogram* e2e_seconds;   ///< received to the end of a completed reply
  /// Time in the wait queue of the requests that left it (sent, expired or refused).
  metrics::Histogram* queue_wait_seconds;
  metrics::Family<metrics::Gauge>* queued;  ///< {model}: waiting in the queue, at render time
  /// {model}: the margin the gateway router subtracts from the TTFT SLO, learned from its
  /// prediction errors (admission/prediction_errors.h), at render time.
  metrics::Family<metrics::Gauge>* prediction_margin_seconds;
  metrics::Family<metrics::Counter>* scrapes_total;  ///< {model, endpoint, result}
  // Per endpoint, refreshed at render time.
  metrics::Family<metrics::Gauge>* endpoint_state;  ///< {model, endpoint, state}: 1 for the current
  metrics::Family<metrics::Gauge>* endpoint_stale;  ///< 1 while its metrics are stale
  metrics::Family<metrics::Gauge>* scrape_age_seconds;
  metrics::Family<metrics::Gauge>* endpoint_in_flight;
  metrics::Family<metrics::Gauge>* endpoint_waiting;  ///< the last scrape's queue
  metrics::Family<metrics::Gauge>* endpoint_running;
  metrics::Family<metrics::Gauge>* endpoint_kv_usage;
  metrics::Gauge* draining;
  /// Config reloads (SIGHUP) by result (ok, error), and whether the last one applied (1; 0
  /// when it failed and the gateway runs on the config before it), as Prometheus's own
  /// prometheus_config_last_reload_successful.
  metrics::Family<metrics::Counter>* config_reloads_total;  ///< {result}: ok, error (both at 0)
  metrics::Gauge* config_last_reload_successful;

  std::unique_ptr<server::ProcessMetrics> process;

 private:
  std::mutex render_mu_;  // one render at a time: it clears and refills the gauges of pools
};

}  // namespace spillway::gateway
