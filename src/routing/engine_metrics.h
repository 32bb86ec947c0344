#pragma once
// What each kind of inference engine says about its load in GET /metrics, mapped to the
// gateway's engine-neutral EndpointLoad. Names as each project documents them:
//
//   kind      waiting                      running                      KV usage (0..1)
//   vllm      vllm:num_requests_waiting    vllm:num_requests_running    vllm:kv_cache_usage_perc
//                                                                       (V0:
//                                                                       vllm:gpu_cache_usage_perc)
//   sglang    sglang:num_queue_reqs        sglang:num_running_reqs      sglang:token_usage
//   tgi       tgi_queue_size               tgi_batch_current_size       (none: 0)
//   llamacpp  llamacpp:requests_deferred   llamacpp:requests_processing
//   llamacpp:kv_cache_usage_ratio spillway  as vllm (spillway serve exports vLLM's names) plus its
//   own spillway_* series openai    no metrics: the gateway routes on its own counts and
//   measurements
//
// Prefix caching (EndpointLoad::prefix_caching): vllm and spillway by vllm:cache_config_info's
// enable_prefix_caching="True"; sglang always (its radix cache is on by default); the others
// never.
//
// Gauges are summed over label sets (one engine may export one series per model or GPU), KV
// usage averaged. Tested on payloads from each project's documentation or sources
// (tests/routing/fixtures/, each file cites its source). Pure.

#include <cstdint>
#include <optional>
#include <string_view>

#include "metrics/prometheus_text.h"
#include "routing/endpoint_state.h"

namespace spillway::routing {

enum class EngineKind : std::uint8_t { kVllm, kSglang, kTgi, kLlamacpp, kSpillway, kOpenai };

/// Parses "vllm", "sglang", "tgi", "llamacpp", "spillway", "openai"; false for anything else.
bool ParseEngineKind(std::string_view name, EngineKind* out);
std::string_view ToString(EngineKind kind);
/// False only for kOpenai (a hosted API without /metrics).
bool ExportsMetrics(EngineKind kind);

/// The kind whose series the exposition holds (spillway_ first, since Spillway also exports
/// vLLM's names); nullopt when none is recognised.
std::optional<EngineKind> DetectEngineKind(const metrics::Exposition& exposition);

/// The load `kind`'s series report; nullopt when the exposition lacks the waiting or the
/// running series (a scrape that says nothing about load counts as a failed scrape). Negative
/// or non-finite values are read as 0; KV usage is clamped to [0, 1].
std::optional<EndpointLoad> LoadFromMetrics(EngineKind kind, const metrics::Exposition& exposition);

}  // namespace spillway::routing
