#include "server/server_metrics.h"

#include "metrics/buckets.h"

namespace spillway::server {

ServerMetrics::ServerMetrics(const std::string& model_name) : model(model_name) {
  const std::vector<double> latency_buckets = metrics::LatencyBucketsSeconds();
  auto& r = registry;
  const std::vector<std::string> by_model = {"model_name"};
  auto gauge = [&](const char* name, const char* help) {
    return &r.AddGauge(name, help, by_model).With({model});
  };
  auto counter = [&](const char* name, const char* help) {
    return &r.AddCounter(name, help, by_model).With({model});
  };
  auto histogram = [&](const char* name, const char* help) {
    return &r.AddHistogram(name, help, latency_buckets, by_model).With({model});
  };
  num_requests_waiting = gauge("vllm:num_requests_waiting", "Requests waiting to be scheduled.");
  num_requests_running = gauge("vllm:num_requests_running", "Requests in the running batch.");
  kv_cache_usage_perc =
      gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.");
  gpu_cache_usage_perc = gauge("vllm:gpu_cache_usage_perc",
                               "GPU KV-cache usage. 1 means 100 percent usage. DEPRECATED: Use "
                               "vllm:kv_cache_usage_perc instead.");
  num_preemptions_total = counter("vllm:num_preemptions_total", "Cumulative preemptions.");
  prompt_tokens_total = counter("vllm:prompt_tokens_total", "Prefill tokens processed.");
  generation_tokens_total = counter("vllm:generation_tokens_total", "Generation tokens.");
  request_queue_time_seconds =
      histogram("vllm:request_queue_time_seconds", "Time in the waiting queue, seconds.");
  request_prefill_time_seconds =
      histogram("vllm:request_prefill_time_seconds", "Time in prefill, seconds.");
  time_to_first_token_seconds =
      histogram("vllm:time_to_first_token_seconds", "Time to first token, seconds.");
  inter_token_latency_seconds =
      histogram("vllm:inter_token_latency_seconds", "Inter-token latency, seconds.");
  time_per_output_token_seconds =
      histogram("vllm:time_per_output_token_seconds", "Time per output token, seconds.");
  e2e_request_latency_seconds =
      histogram("vllm:e2e_request_latency_seconds", "End-to-end request latency, seconds.");
  request_success_total =
      &r.AddCounter("vllm:request_success_total", "Finished requests by finish reason.",
                    {"model_name", "finished_reason"});
  prefix_cache_queries_total =
      counter("vllm:prefix_cache_queries_total",
              "Prefix cache queries: tokens of the requests scheduled from the queue.");
  prefix_cache_hits_total = counter("vllm:prefix_cache_hits_total",
                                    "Prefix cache hits: prompt tokens found in the cache.");
  cache_config_info = &r.AddGauge("vllm:cache_config_info", "Information of the KV cache config.",
                                  {"block_size", "enable_prefix_caching", "num_gpu_blocks"});

  admission_decisions_total =
      &r.AddCounter("spillway_admission_decisions_total",
                    "Admission decisions by decision (admit, degrade, reject), reason and tenant.",
                    {"decision", "reason", "tenant"});
  http_requests_total =
      &r.AddCounter("spillway_http_requests_total", "HTTP responses by status.", {"status"});
  aborts_total = &r.AddCounter("spillway_aborts_total",
                               "Engine aborts by cause (client_disconnect, deadline, "
                               "server_timeout, slow_client, shutdown).",
                               {"cause"});
  estimated_queue_delay_seconds =
      &r.AddGauge("spillway_estimated_queue_delay_seconds",
                  "W_est: estimated wait before a new request's prefill starts, seconds.")
           .Get();
  ttft_forecast_queue_seconds =
      &r.AddGauge("spillway_ttft_forecast_queue_seconds",
                  "Under the forecast policy: the engine's forecast of the wait before a new "
                  "request of the mean admitted shape starts its prefill, seconds (at most twice "
                  "the TTFT SLO; -1: not forecast). A gateway routes on it.")
           .Get();
  service_rate_requests_per_second =
      &r.AddGauge("spillway_service_rate_requests_per_second",
                  "Service rate mu_hat, requests per second: the profile's prior until "
                  "saturated windows measure it.")
           .Get();
  prefill_throughput_tokens_per_second =
      &r.AddGauge("spillway_prefill_throughput_tokens_per_second",
                  "Prefill throughput beside running decodes, tokens per second: the "
                  "profile's prior at a full batch until steps with a full token budget "
                  "measure it (lighter steps give a lower bound meanwhile).")
           .Get();
  engine_busy_seconds_total =
      &r.AddCounter("spillway_engine_busy_seconds_total", "Engine time spent in steps, seconds.")
           .Get();
  wasted_engine_seconds_total =
      &r.AddCounter("spillway_wasted_engine_seconds_total",
                    "Engine time spent on requests whose client had gone, seconds.")
           .Get();
  not_completed_engine_seconds_total =
      &r.AddCounter("spillway_not_completed_engine_seconds_total",
                    "Engine time spent on requests that did not complete for their client "
                    "(aborted, dropped, failed, timed out, or finished after the client left), "
                    "seconds; counted when the request leaves the engine.")
           .Get();
  recomputed_prefill_tokens_total =
      &r.AddCounter("spillway_recomputed_prefill_tokens_total",
                    "Tokens whose KV cache preemption discarded, to be prefilled again.")
           .Get();
  goodput_requests_total =
      &r.AddCounter("spillway_goodput_requests_total",
                    "Requests completed within their SLOs: TTFT (from arrival at the server) "
                    "within the TTFT SLO and TPOT within the TPOT SLO.")
           .Get();
  draining = &r.AddGauge("spillway_draining", "1 while the server drains after SIGTERM.").Get();
  process = std::make_unique<ProcessMetrics>(r);
}

std::string ServerMetrics::Render() {
  process->Update();
  return registry.Render();
}

}  // namespace spillway::server
