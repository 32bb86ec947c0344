#pragma once
// Looks up samples in a Prometheus text exposition (the format of GET /metrics), parsed by
// prometheus_text.h; `#` lines are comments.
// Only what the load generator needs: the sum or mean of every sample with a given name,
// whatever its labels. Pure.

#include <optional>
#include <string_view>
#include <vector>

namespace spillway::metrics {

/// Sum of the values of every sample called `name`; nullopt when there is none.
std::optional<double> SampleSum(std::string_view exposition, std::string_view name);

/// Mean of the values of every sample called `name`; nullopt when there is none.
std::optional<double> SampleMean(std::string_view exposition, std::string_view name);

/// The server-side numbers the load generator reports, each nullopt when the server does not
/// export it. Gauges are summed over label sets (KV usage averaged); counters are totals
/// since the server started (the caller takes differences).
struct ServerSnapshot {
  std::optional<double> waiting;      ///< vllm:num_requests_waiting
  std::optional<double> running;      ///< vllm:num_requests_running
  std::optional<double> kv_usage;     ///< vllm:kv_cache_usage_perc (older vLLM: gpu_cache_...), 0-1
  std::optional<double> preemptions;  ///< vllm:num_preemptions_total
  std::optional<double> prompt_tokens;      ///< vllm:prompt_tokens_total
  std::optional<double> recomputed_tokens;  ///< spillway_recomputed_prefill_tokens_total
  std::optional<double> engine_busy_s;      ///< spillway_engine_busy_seconds_total
  std::optional<double> wasted_engine_s;    ///< spillway_wasted_engine_seconds_total
  /// spillway_not_completed_engine_seconds_total: engine seconds on requests that did not
  /// complete (aborted, dropped, failed, timed out)
  std::optional<double> not_completed_engine_s;
  std::optional<double> service_rate_rps;      ///< spillway_service_rate_requests_per_second
  std::optional<double> prefill_tokens_per_s;  ///< spillway_prefill_throughput_tokens_per_second
  std::optional<double> prefix_cache_queries;  ///< vllm:prefix_cache_queries_total, tokens
  std::optional<double> prefix_cache_hits;     ///< vllm:prefix_cache_hits_total, tokens
};

ServerSnapshot ReadServerSnapshot(std::string_view exposition);

/// Several servers' snapshots as one (the engines behind a gateway): every field summed, KV
/// usage the mean of those that report it; a field no part has stays nullopt.
ServerSnapshot SumSnapshots(const std::vector<ServerSnapshot>& parts);

}  // namespace spillway::metrics
