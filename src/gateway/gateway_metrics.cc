#include "gateway/gateway_metrics.h"

#include <array>
#include <cmath>

#include "metrics/buckets.h"

namespace spillway::gateway {
namespace {

constexpr std::array<routing::EndpointHealth, 4> kStates = {
    routing::EndpointHealth::kHealthy, routing::EndpointHealth::kDraining,
    routing::EndpointHealth::kEjected, routing::EndpointHealth::kDown};

std::string StateName(routing::EndpointHealth h) {
  switch (h) {
    case routing::EndpointHealth::kHealthy:
      return "healthy";
    case routing::EndpointHealth::kDraining:
      return "draining";
    case routing::EndpointHealth::kEjected:
      return "ejected";
    case routing::EndpointHealth::kDown:
      return "down";
  }
  return "down";
}

}  // namespace

GatewayMetrics::GatewayMetrics() {
  auto& r = registry;
  const std::vector<std::string> by_endpoint = {"model", "endpoint"};
  requests_total = &r.AddCounter("spillway_gateway_requests_total",
                                 "Replies to the completion routes by status, reason and who "
                                 "decided (gateway, endpoint, client).",
                                 {"model", "status", "reason", "by"});
  received_total =
      &r.AddCounter("spillway_gateway_received_total", "Completion requests received (valid).")
           .Get();
  shed_total =
      &r.AddCounter("spillway_gateway_shed_total",
                    "Valid requests refused by the gateway's router or queue (429, 503); refusals "
                    "at the door (401, 429 rate_limited, 503 draining) come before a "
                    "request is received and are in requests_total only.")
           .Get();
  completed_total = &r.AddCounter("spillway_gateway_completed_total",
                                  "Requests relayed to the end with status 200.")
                         .Get();
  failed_total = &r.AddCounter("spillway_gateway_failed_total",
                               "Requests that ended with an upstream refusal or error passed "
                               "on, the gateway's deadline, or a broken stream.")
                      .Get();
  cancelled_total =
      &r.AddCounter("spillway_gateway_cancelled_total", "Requests whose client left.").Get();
  in_flight = &r.AddGauge("spillway_gateway_in_flight", "Requests received, not yet ended.").Get();
  forwarded_total = &r.AddCounter("spillway_gateway_forwarded_total",
                                  "Attempts sent to an endpoint (retries included).", by_endpoint);
  prefix_prompt_tokens_total =
      &r.AddCounter("spillway_gateway_prefix_prompt_tokens_total",
                    "Prompt tokens of the attempts sent, as the gateway counts them.", {"model"});
  prefix_matched_tokens_total =
      &r.AddCounter("spillway_gateway_prefix_matched_tokens_total",
                    "Prompt tokens of the attempts sent that the endpoint chosen was believed to "
                    "hold in its prefix cache (prefix-aware routing).",
                    {"model"});
  retries_total =
      &r.AddCounter("spillway_gateway_retries_total", "Attempts sent as retries.").Get();
  cascaded_total = &r.AddCounter("spillway_gateway_cascaded_total",
                                 "Requests sent on to a fallback model's pool (the model "
                                 "cascade), by the model asked for and the fallback's.",
                                 {"model", "served_model"});
  served_total = &r.AddCounter("spillway_gateway_served_total",
                               "Requests an endpoint answered, by the model asked for and the "
                               "model that served them (another when cascaded).",
                               {"model", "served_model"});
  cascade_steps_total =
      &r.AddCounter("spillway_gateway_cascade_steps_total",
                    "Requests by the step of the cascade that took them (primary, clamp, "
                    "fallback), or reject when the last step's refusal was sent.",
                    {"model", "step"});
  max_tokens_clamped_total =
      &r.AddCounter("spillway_gateway_max_tokens_clamped_total",
                    "Requests sent with max_tokens clamped (the cascade's clamp step), by the "
                    "model asked for.",
                    {"model"});
  cache_lookups_total = &r.AddCounter("spillway_gateway_cache_lookups_total",
                                      "Lookups in the exact-result cache, by result (hit, miss).",
                                      {"model", "result"});
  cache_stores_total =
      &r.AddCounter("spillway_gateway_cache_stores_total",
                    "Answers offered to the exact-result cache, by result (stored, not_kept).",
                    {"model", "result"});
  cache_evictions_total = &r.AddCounter("spillway_gateway_cache_evictions_total",
                                        "Entries evicted from the exact-result cache to make "
                                        "room (least recently used first).")
                               .Get();
  cache_entries =
      &r.AddGauge("spillway_gateway_cache_entries", "Entries in the exact-result cache.").Get();
  cache_bytes = &r.AddGauge("spillway_gateway_cache_bytes",
                            "Bytes of the exact-result cache's keys and answers.")
                     .Get();
  retries_denied_total =
      &r.AddCounter("spillway_gateway_retries_denied_total",
                    "Retries not sent, by why: attempts, no_endpoint, budget.", {"why"});
  tenant_refusals_total =
      &r.AddCounter("spillway_gateway_tenant_refusals_total",
                    "429s by tenant and reason (X-Overload-Reason): its request, token or retry "
                    "limits, the shared limiter unavailable, or the pools' load.",
                    {"tenant", "reason"});
  tenant_retries_total = &r.AddCounter(
      "spillway_gateway_tenant_retries_total",
      "Requests seen before from the same tenant within rate_limit.retry_window_s (same "
      "Idempotency-Key, or same body), by tenant.",
      {"tenant"});
  rate_limit_decisions_total = &r.AddCounter(
      "spillway_gateway_rate_limit_decisions_total",
      "Tenant quota decisions by where they were made: shared (Redis), local (no Redis "
      "configured), fail_open (Redis unavailable: the local share), fail_close (Redis "
      "unavailable: refused), and by result (allowed, refused).",
      {"source", "result"});
  rate_limiter_mode = &r.AddGauge("spillway_gateway_rate_limiter_mode",
                                  "1 for the mode the tenant quotas are decided in: shared, local, "
                                  "fail_open or fail_close.",
                                  {"mode"});
  rate_limit_gateways = &r.AddGauge("spillway_gateway_rate_limit_gateways",
                                    "Gateways sharing the tenant quotas, as Redis last counted "
                                    "them (fail-open divides each rate by it).")
                             .Get();
  rate_limit_decision_seconds =
      &r.AddHistogram("spillway_gateway_rate_limit_decision_seconds",
                      "Round trip of a shared quota decision to Redis, seconds.",
                      {0.00005, 0.0001, 0.00015, 0.0002, 0.0003, 0.0004, 0.0005, 0.00075, 0.001,
                       0.002, 0.005, 0.01, 0.05})
           .Get();
  ttft_seconds = &r.AddHistogram("spillway_gateway_ttft_seconds",
                                 "Send to the first relayed bytes of a 200 stream, seconds.",
                                 metrics::LatencyBucketsSeconds())
                      .Get();
  e2e_seconds = &r.AddHistogram("spillway_gateway_e2e_seconds",
                                "Received to the end of a completed reply, seconds.",
                                metrics::LatencyBucketsSeconds())
                     .Get();
  queue_wait_seconds =
      &r.AddHistogram("spillway_gateway_queue_wait_seconds",
                      "Time in the gateway's wait queue of the requests that left it, seconds.",
                      metrics::LatencyBucketsSeconds())
           .Get();
  queued = &r.AddGauge("spillway_gateway_queued",
                       "Requests waiting in the gateway's queue for a slot (in_flight counts "
                       "them too).",
                       {"model"});
  prediction_margin_seconds =
      &r.AddGauge("spillway_gateway_prediction_margin_seconds",
                  "The margin the gateway router subtracts from the TTFT SLO: a high quantile of "
                  "its recent TTFT prediction errors, seconds.",
                  {"model"});
  scrapes_total = &r.AddCounter("spillway_gateway_scrapes_total",
                                "Scrapes of the endpoints' /metrics by result: ok, error.",
                                {"model", "endpoint", "result"});
  endpoint_state = &r.AddGauge("spillway_gateway_endpoint_state",
                               "1 for the endpoint's state (healthy, draining, ejected, down).",
                               {"model", "endpoint", "state"});
  endpoint_stale = &r.AddGauge("spillway_gateway_endpoint_stale",
                               "1 while the endpoint's metrics are older than stale_after_s "
                               "(a scrape outage, not overload).",
                               by_endpoint);
  scrape_age_seconds =
      &r.AddGauge("spillway_gateway_scrape_age_seconds",
                  "Seconds since the endpoint's last good scrape (-1: never).", by_endpoint);
  endpoint_in_flight =
      &r.AddGauge("spillway_gateway_endpoint_in_flight",
                  "The gateway's requests in flight at the endpoint.", by_endpoint);
  endpoint_waiting = &r.AddGauge("spillway_gateway_endpoint_waiting",
                                 "Requests waiting at the endpoint, as last scraped.", by_endpoint);
  endpoint_running = &r.AddGauge("spillway_gateway_endpoint_running",
                                 "Requests running at the endpoint, as last scraped.", by_endpoint);
  endpoint_kv_usage =
      &r.AddGauge("spillway_gateway_endpoint_kv_usage",
                  "KV cache usage at the endpoint (0-1), as last scraped.", by_endpoint);
  draining = &r.AddGauge("spillway_gateway_draining", "1 while the gateway drains.").Get();
  config_reloads_total =
      &r.AddCounter("spillway_gateway_config_reloads_total",
                    "Config reloads (SIGHUP) by result (ok, error).", {"result"});
  config_last_reload_successful =
      &r.AddGauge("spillway_gateway_config_last_reload_successful",
                  "1 when the last config reload applied (or none was asked), 0 when it failed "
                  "and the gateway runs on the config before it.")
           .Get();
  config_last_reload_successful->Set(1);
  config_reloads_total->With({"ok"});  // both series from the start, at 0
  config_reloads_total->With({"error"});
  process = std::make_unique<server::ProcessMetrics>(r);
}

std::string GatewayMetrics::Render(const std::vector<std::shared_ptr<EndpointPool>>& pools,
                                   Seconds now) {
  const std::lock_guard lock(render_mu_);
  for (metrics::Family<metrics::Gauge>* f :
       {queued, prediction_margin_seconds, endpoint_state, endpoint_stale, scrape_age_seconds,
        endpoint_in_flight, endpoint_waiting, endpoint_running, endpoint_kv_usage}) {
    f->Clear();
  }
  for (const auto& pool : pools) {
    queued->With({pool->model()}).Set(static_cast<double>(pool->waiting()));
    prediction_margin_seconds->With({pool->model()}).Set(pool->prediction_margin_s());
    for (const EndpointView& v : pool->View(now)) {
      const std::vector<std::string> labels = {pool->model(), v.url};
      for (const routing::EndpointHealth h : kStates) {
        endpoint_state->With({pool->model(), v.url, StateName(h)}).Set(v.health == h ? 1 : 0);
      }
      endpoint_stale->With(labels).Set(v.stale ? 1 : 0);
      scrape_age_seconds->With(labels).Set(std::isfinite(v.metrics_age_s) ? v.metrics_age_s : -1);
      endpoint_in_flight->With(labels).Set(v.in_flight);
      endpoint_waiting->With(labels).Set(v.load.num_waiting);
      endpoint_running->With(labels).Set(v.load.num_running);
      endpoint_kv_usage->With(labels).Set(v.load.kv_usage);
    }
  }
  process->Update();
  return registry.Render();
}

}  // namespace spillway::gateway
