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
  s.prefix_cache_queries = sum("vllm:prefix_cache_queries_total");
  s.prefix_cache_hits = sum("vllm:prefix_cache_hits_total");
  return s;
}

ServerSnapshot SumSnapshots(const std::vector<ServerSnapshot>& parts) {
  ServerSnapshot total;
  const auto add = [](std::optional<double>& into, const std::optional<double>& v) {
    if (v.has_value()) {
      into = into.value_or(0) + *v;
    }
  };
  int kv_parts = 0;
  for (const ServerSnapshot& p : parts) {
    add(total.waiting, p.waiting);
    add(total.running, p.running);
    add(total.kv_usage, p.kv_usage);
    kv_parts += p.kv_usage.has_value() ? 1 : 0;
    add(total.preemptions, p.preemptions);
    add(total.prompt_tokens, p.prompt_tokens);
    add(total.recomputed_tokens, p.recomputed_tokens);
    add(total.engine_busy_s, p.engine_busy_s);
    add(total.wasted_engine_s, p.wasted_engine_s);
    add(total.not_completed_engine_s, p.not_completed_engine_s);
    add(total.service_rate_rps, p.service_rate_rps);
    add(total.prefill_tokens_per_s, p.prefill_tokens_per_s);
    add(total.prefix_cache_queries, p.prefix_cache_queries);
    add(total.prefix_cache_hits, p.prefix_cache_hits);
  }
  if (kv_parts > 0) {
    *total.kv_usage /= kv_parts;
  }
  return total;
}

}  // namespace spillway::metrics
