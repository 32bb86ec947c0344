#include "routing/engine_metrics.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace spillway::routing {
namespace {

struct KindNames {
  EngineKind kind;
  std::string_view name;
  std::string_view waiting;
  std::string_view running;
  std::string_view kv_usage;      // empty: not exported
  std::string_view kv_usage_old;  // an older engine generation's name, or empty
};

constexpr std::array<KindNames, 6> kKinds = {{
    {EngineKind::kVllm, "vllm", "vllm:num_requests_waiting", "vllm:num_requests_running",
     "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
    {EngineKind::kSglang, "sglang", "sglang:num_queue_reqs", "sglang:num_running_reqs",
     "sglang:token_usage", ""},
    {EngineKind::kTgi, "tgi", "tgi_queue_size", "tgi_batch_current_size", "", ""},
    {EngineKind::kLlamacpp, "llamacpp", "llamacpp:requests_deferred",
     "llamacpp:requests_processing", "llamacpp:kv_cache_usage_ratio", ""},
    {EngineKind::kSpillway, "spillway", "vllm:num_requests_waiting", "vllm:num_requests_running",
     "vllm:kv_cache_usage_perc", ""},
    {EngineKind::kOpenai, "openai", "", "", "", ""},
}};

const KindNames& NamesOf(EngineKind kind) { return kKinds[static_cast<std::size_t>(kind)]; }

double NonNegative(double v) { return std::isfinite(v) && v > 0 ? v : 0; }

std::int32_t Count(double v) {
  return static_cast<std::int32_t>(std::min(std::round(NonNegative(v)), 1e9));
}

// vLLM (and spillway serve) say whether they cache prefixes in vllm:cache_config_info's
// enable_prefix_caching label ("True"/"False", Python's spelling); SGLang's radix cache is on
// unless started with --disable-radix-cache, which its metrics do not say; TGI and llama.cpp
// are not counted on (llama.cpp reuses a prompt only in the slot that last held it).
bool PrefixCaching(EngineKind kind, const metrics::Exposition& exposition) {
  if (kind == EngineKind::kSglang) {
    return true;
  }
  if (kind != EngineKind::kVllm && kind != EngineKind::kSpillway) {
    return false;
  }
  return std::any_of(
      exposition.samples.begin(), exposition.samples.end(), [](const metrics::Sample& s) {
        const std::string* on =
            s.name == "vllm:cache_config_info" ? s.Label("enable_prefix_caching") : nullptr;
        return on != nullptr && (*on == "True" || *on == "true") && s.value != 0;
      });
}

}  // namespace

bool ParseEngineKind(std::string_view name, EngineKind* out) {
  for (const KindNames& k : kKinds) {
    if (k.name == name) {
      *out = k.kind;
      return true;
    }
  }
  return false;
}

std::string_view ToString(EngineKind kind) { return NamesOf(kind).name; }

bool ExportsMetrics(EngineKind kind) { return kind != EngineKind::kOpenai; }

std::optional<EngineKind> DetectEngineKind(const metrics::Exposition& exposition) {
  if (exposition.HasPrefix("spillway_")) {
    return EngineKind::kSpillway;
  }
  if (exposition.HasPrefix("vllm:")) {
    return EngineKind::kVllm;
  }
  if (exposition.HasPrefix("sglang:")) {
    return EngineKind::kSglang;
  }
  if (exposition.HasPrefix("tgi_")) {
    return EngineKind::kTgi;
  }
  if (exposition.HasPrefix("llamacpp:")) {
    return EngineKind::kLlamacpp;
  }
  return std::nullopt;
}

std::optional<EndpointLoad> LoadFromMetrics(EngineKind kind,
                                            const metrics::Exposition& exposition) {
  const KindNames& k = NamesOf(kind);
  if (k.waiting.empty()) {
    return std::nullopt;
  }
  const std::optional<double> waiting = exposition.Sum(k.waiting);
  const std::optional<double> running = exposition.Sum(k.running);
  if (!waiting.has_value() || !running.has_value()) {
    return std::nullopt;
  }
  EndpointLoad load;
  load.num_waiting = Count(*waiting);
  load.num_running = Count(*running);
  std::optional<double> kv;
  if (!k.kv_usage.empty()) {
    kv = exposition.Mean(k.kv_usage);
  }
  if (!kv.has_value() && !k.kv_usage_old.empty()) {
    kv = exposition.Mean(k.kv_usage_old);
  }
  load.kv_usage = std::min(NonNegative(kv.value_or(0)), 1.0);
  load.prefix_caching = PrefixCaching(kind, exposition);
  if (kind == EngineKind::kSpillway) {
    // One series (spillway serve runs one engine); -1 says it does not forecast.
    if (const std::optional<double> f = exposition.Sum("spillway_ttft_forecast_queue_seconds");
        f.has_value() && std::isfinite(*f) && *f >= 0) {
      load.queue_forecast_s = *f;
    }
  }
  return load;
}

}  // namespace spillway::routing
