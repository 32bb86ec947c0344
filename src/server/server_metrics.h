#pragma once
// Every metric `spillway serve` exposes on /metrics, declared in one place (the list is the
// test oracle). vLLM-compatible engine metrics keep vLLM's names and `model_name` label, so
// gateways and dashboards built for vLLM work unchanged; Spillway's own are `spillway_*`.

#include <memory>
#include <string>

#include "metrics/metrics.h"
#include "server/process_metrics.h"

namespace spillway::server {

struct ServerMetrics {
  explicit ServerMetrics(const std::string& model_name);

  /// The exposition for GET /metrics: refreshes the process metrics from procfs, then renders
  /// the registry. Thread-safe.
  std::string Render();

  metrics::Registry registry;
  std::string model;

  // vLLM-compatible (vllm/v1/metrics/loggers.py names).
  metrics::Gauge* num_requests_waiting;
  metrics::Gauge* num_requests_running;
  metrics::Gauge* kv_cache_usage_perc;  ///< fraction in [0, 1], as vLLM reports it
  /// The same, by the name vLLM v0 used and v1 still exports (deprecated there): what the
  /// Gateway API Inference Extension's endpoint picker reads by default (v0.3 to v0.5).
  metrics::Gauge* gpu_cache_usage_perc;
  metrics::Counter* num_preemptions_total;
  metrics::Counter* prompt_tokens_total;
  metrics::Counter* generation_tokens_total;
  metrics::Histogram* request_queue_time_seconds;
  metrics::Histogram* request_prefill_time_seconds;
  metrics::Histogram* time_to_first_token_seconds;
  metrics::Histogram* inter_token_latency_seconds;
  metrics::Histogram* time_per_output_token_seconds;
  metrics::Histogram* e2e_request_latency_seconds;
  metrics::Family<metrics::Counter>* request_success_total;  ///< {model_name, finished_reason}
  /// Prefix caching, prompt tokens: those of requests scheduled from the queue, those found
  /// cached (vLLM v1's prefix_cache_queries / prefix_cache_hits; 0 with caching off).
  metrics::Counter* prefix_cache_queries_total;
  metrics::Counter* prefix_cache_hits_total;
  /// 1, labelled with the KV cache's configuration: {block_size, enable_prefix_caching,
  /// num_gpu_blocks} (set by the EngineService).
  metrics::Family<metrics::Gauge>* cache_config_info;

  // Spillway's own.
  metrics::Family<metrics::Counter>* admission_decisions_total;  ///< {decision, reason, tenant}
  metrics::Family<metrics::Counter>* http_requests_total;        ///< {status}
  metrics::Family<metrics::Counter>* aborts_total;               ///< {cause}
  metrics::Gauge* estimated_queue_delay_seconds;
  metrics::Gauge* ttft_forecast_queue_seconds;
  metrics::Gauge* service_rate_requests_per_second;
  metrics::Gauge* prefill_throughput_tokens_per_second;
  metrics::Counter* engine_busy_seconds_total;
  metrics::Counter* wasted_engine_seconds_total;
  metrics::Counter* not_completed_engine_seconds_total;
  /// Tokens whose KV cache a preemption discarded, counted when it happens: the prefill that
  /// recomputing them costs (vllm:prompt_tokens_total counts that prefill again when it runs).
  metrics::Counter* recomputed_prefill_tokens_total;
  /// Requests completed within their SLOs as the server measures them (TTFT from arrival at
  /// the server, TPOT over the generation): the goodput the policy's alert watches
  /// (`rate(spillway_goodput_requests_total[1m])`, docs/policy.md).
  metrics::Counter* goodput_requests_total;
  metrics::Gauge* draining;

  // The standard process_* families of the Prometheus client libraries (process_metrics.h),
  // declared last.
  std::unique_ptr<ProcessMetrics> process;
};

}  // namespace spillway::server
