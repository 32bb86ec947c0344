#include "metrics/metrics_text.h"

#include "metrics/prometheus_text.h"

namespace spillway::metrics {

std::optional<double> SampleSum(std::string_view exposition, std::string_view name) {
  return ParseExposition(exposition).Sum(name);
}

std::optional<double> SampleMean(std::string_view exposition, std::string_view name) {
  return ParseExposition(exposition).Mean(name);
}

ServerSnapshot ReadServerSnapshot(std::string_view text) {
  const Exposition exposition = ParseExposition(text);
  const auto sum = [&exposition](std::string_view name) { return exposition.Sum(name); };
  const auto mean = [&exposition](std::string_view name) { return exposition.Mean(name); };
  ServerSnapshot s;
  s.waiting = sum("vllm:num_requests_waiting");
  s.running = sum("vllm:num_requests_running");
  s.kv_usage = mean("vllm:kv_cache_usage_perc");
  if (!s.kv_usage.has_value()) {
    s.kv_usage = mean("vllm:gpu_cache_usage_perc");
  }
  s.preemptions = sum("vllm:num_preemptions_total");
  s.prompt_tokens = sum("vllm:prompt_tokens_total");
  s.recomputed_tokens = sum("spillway_recomputed_prefill_tokens_total");
  s.engine_busy_s = sum("spillway_engine_busy_seconds_total");
  s.wasted_engine_s = sum("spillway_wasted_engine_seconds_total");
  s.not_completed_engine_s = sum("spillway_not_completed_engine_seconds_total");
  s.service_rate_rps = sum("spillway_service_rate_requests_per_second");
  s.prefill_tokens_per_s = sum("spillway_prefill_throughput_tokens_per_second");
  return s;
}

}  // namespace spillway::metrics
