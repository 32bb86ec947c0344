#pragma once
// The gateway's first stage of two-stage admission (admission-control reference, "gateway and
// model server: two-stage control"): from the whole pool's state, decide where to send a
// request, or to drop it. The model server behind it makes the final admission from its own
// queue and KV state; both speak the same overload contract (api/overload_contract.h).
//
//   Route(request, now) -> Forward(endpoint) | Shed 429 queue_delay_exceeded (Retry-After from
//                          the pool's drain rate) | HardLimit 503 no_endpoint
//
// Pickers (RouterPolicy):
//   gateway          Spillway's: each eligible endpoint's predicted TTFT for this request
//                    (EndpointState::PredictTtft); among those that meet the TTFT SLO, power of
//                    two choices (two drawn at random, the lower prediction wins; predictions
//                    within tie_tolerance_s are a tie, which goes to the first drawn, so idle
//                    endpoints share the load evenly), so gateways do not herd onto one
//                    endpoint; 429 when none can. Prefix-aware (RouterConfig::prefix): an
//                    endpoint that reports prefix caching (vllm:cache_config_info) and is
//                    believed to hold the prompt's first blocks (prefix_index.h) is predicted
//                    without their prefill; the first of the two is drawn among those that
//                    meet the SLO and hold the most of the prompt, and wins over one that
//                    holds less: among endpoints that all meet the SLO, the prefill saved is
//                    capacity for the requests after it (a loaded holder that cannot meet the
//                    SLO is passed over).
//   round-robin      the next eligible endpoint in turn (LiteLLM's simple shuffle, many L7 LBs).
//   least-requests   the eligible endpoint with the fewest of the gateway's requests in flight
//                    (vLLM production-stack's router, Envoy LEAST_REQUEST).
//   llm-d            the Gateway API Inference Extension / llm-d endpoint picker's defaults: an
//                    endpoint is saturated at queue depth >= 5, KV usage >= 0.8, or metrics older
//                    than 200 ms (its own threshold: stale_after_s and staleness do not apply);
//                    when every eligible endpoint is saturated, a sheddable request (priority
//                    > 0 here, a negative InferenceObjective priority there) gets 429 and any
//                    other is still dispatched; the pick is the best of the queue and KV-usage
//                    scorers (each 0..1, equal weights) among the unsaturated endpoints, or
//                    among all when every one is saturated; with prefix-aware routing on, its
//                    default scheduling profile's weights: prefix-cache 3, queue 2, KV 2 (the
//                    prefix score: the share of the request's blocks the endpoint is believed
//                    to hold, whether or not it reports caching, as GIE's scorer).
// Eligible: healthy (not draining, ejected or down) and not in the request's `exclude` list.
// Metrics older than stale_after_s switch an endpoint, per `staleness`, to fail-close (counted
// saturated: never picked) or fail-open (its prediction from the gateway's own in-flight count and
// measured rates).
//
// Deterministic for a seed (the simulator replays it); no clock, no I/O. Not thread-safe.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admission/admission.h"
#include "core/prompt_segments.h"
#include "core/rng.h"
#include "routing/endpoint_state.h"
#include "routing/prefix_index.h"

namespace spillway::routing {

enum class RouterPolicy : std::uint8_t { kGateway, kRoundRobin, kLeastRequests, kLlmd };
/// Parses "gateway", "round-robin", "least-requests", "llm-d"; false for anything else.
bool ParseRouterPolicy(std::string_view name, RouterPolicy* out);
std::string_view ToString(RouterPolicy policy);

enum class Staleness : std::uint8_t { kFailClose, kFailOpen };
bool ParseStaleness(std::string_view name, Staleness* out);  ///< "fail-close", "fail-open"
std::string_view ToString(Staleness staleness);

/// Prefix-aware routing: the gateway hashes each prompt's leading blocks and remembers where it
/// sent them (prefix_index.h). Defaults: the Gateway API Inference Extension's prefix-cache
/// scorer (block size 16 tokens, vLLM's; 31,250 blocks per endpoint), but 8,192 blocks matched
/// (128k tokens) where GIE matches 256 (4k): the shared part of a long-context prompt reaches
/// far past 4k tokens (the Mooncake trace's prompts average 15k).
struct PrefixRouting {
  bool enabled = true;
  std::int32_t block_tokens = 16;         ///< > 0; the engines' KV block size for exact matches
  std::int32_t max_blocks = 8192;         ///< > 0; a prompt's blocks past these are not hashed
  std::int64_t capacity_blocks = 31'250;  ///< > 0; block hashes remembered per endpoint
};

/// The hashes of a prompt's leading blocks for prefix-aware routing
/// (RouteRequest::prefix_blocks), from its shared `segments` (null: none; sched/block_hashes.h
/// SharedPrefixBlockHashes at `prefix`'s block size); null when `prefix` is off or no whole
/// block is shared.
std::shared_ptr<const std::vector<std::uint64_t>> PromptPrefixBlocks(
    const PrefixRouting& prefix, const std::shared_ptr<const PromptSegments>& segments,
    std::int32_t prompt_tokens);

struct RouterConfig {
  RouterPolicy policy = RouterPolicy::kGateway;
  Seconds ttft_slo_s = 1.0;
  /// Metrics older than this are stale: about four scrape intervals of 0.25 s (not the 200 ms
  /// that halted llm-d-router's dispatch when a scrape ran late, llm-d-router#2408).
  Seconds stale_after_s = 1.0;
  Staleness staleness = Staleness::kFailOpen;
  std::uint64_t seed = 1;  ///< power of two choices
  /// gateway: predicted TTFTs this close are a tie (the first of the two drawn wins), so
  /// estimates that differ by noise do not herd the load onto one endpoint.
  Seconds tie_tolerance_s = 0.05;
  PrefixRouting prefix;
};

/// The llm-d endpoint picker's saturation defaults (its utilization detector).
inline constexpr std::int32_t kLlmdQueueDepthThreshold = 5;
inline constexpr double kLlmdKvCacheThreshold = 0.8;
inline constexpr Seconds kLlmdMetricsStalenessS = 0.2;

struct RouteRequest {
  std::int32_t prompt_tokens = 0;
  std::int32_t priority = 0;  ///< lower is more urgent (as the scheduler's); > 0 is sheddable
  /// The request's own TTFT SLO (x-llm-d-slo-ttft-ms), else the config's.
  std::optional<Seconds> ttft_slo_s = std::nullopt;
  /// Endpoints not to pick: those a retry of this request already tried (indices into the pool).
  std::vector<std::int32_t> exclude = {};
  /// Whether the request may wait in the pool's queue (routing/pool.h) when no endpoint can
  /// start it now: false in a cascade stage that a later stage of the same pool follows
  /// (routing/cascade.h); then it is refused at once, as behind waiting requests as urgent.
  bool may_wait = true;
  /// The request's flow for fair shedding (PoolConfig::fair_share): its fairness ID (the
  /// x-gateway-inference-fairness-id header), else its tenant; empty: one unnamed flow.
  std::string flow = {};
  /// The prompt's leading block hashes at PrefixRouting::block_tokens (Pool::PrefixBlocks);
  /// null: not prefix-aware (no shared segments, or prefix routing off).
  std::shared_ptr<const std::vector<std::uint64_t>> prefix_blocks = nullptr;
};

struct RouteDecision {
  Verdict verdict = Verdict::kAdmit;  ///< kAdmit (forward), kShed (429) or kHardLimit (503)
  OverloadReason reason = OverloadReason::kNone;
  std::int32_t endpoint = -1;    ///< index into the pool when forwarded
  Seconds predicted_ttft_s = 0;  ///< at the chosen endpoint (gateway), else 0
  Seconds retry_after_s = 0;     ///< whole seconds >= 1 on a refusal
  /// Prompt tokens the chosen endpoint is believed to hold cached (prefix-aware routing).
  std::int32_t cached_tokens = 0;
  bool forwarded() const { return verdict == Verdict::kAdmit; }
};

class Router {
 public:
  explicit Router(RouterConfig config);

  /// Decides for `request` over `pool` at `now`, with `prefixes` (null: not prefix-aware) what
  /// each endpoint is believed to hold. Does not record the forward: the driver calls
  /// EndpointState::OnForward (and PrefixIndex::Record) when it sends.
  RouteDecision Route(const RouteRequest& request, const std::vector<EndpointState>& pool,
                      Seconds now, const PrefixIndex* prefixes = nullptr);

  /// The pool's drain time at `now`, whole seconds in [1, 3600]: the requests ahead on the
  /// endpoints that take work over their summed service rate (the Retry-After of a refusal).
  Seconds DrainTime(const std::vector<EndpointState>& pool, Seconds now) const;

  /// True when `endpoint`'s metrics are fresh enough to route on at `now`.
  bool Fresh(const EndpointState& endpoint, Seconds now) const;

  const RouterConfig& config() const { return config_; }

 private:
  RouteDecision Predictive(const RouteRequest& request, const std::vector<EndpointState>& pool,
                           const std::vector<std::int32_t>& eligible, Seconds now,
                           const PrefixIndex* prefixes);
  RouteDecision Llmd(const RouteRequest& request, const std::vector<EndpointState>& pool,
                     const std::vector<std::int32_t>& eligible, Seconds now,
                     const PrefixIndex* prefixes) const;
  /// Tokens of `request` cached when `matched` leading blocks are held: whole blocks before the
  /// last prompt token's (vLLM computes the block that holds it).
  std::int32_t CachedTokens(const RouteRequest& request, std::int32_t matched) const;
  /// Leading blocks of `request` endpoint `i` is believed to hold (0 without an index).
  static std::int32_t MatchedBlocks(const RouteRequest& request, std::int32_t i,
                                    const PrefixIndex* prefixes);
  /// 429 queue_delay_exceeded, Retry-After the pool's drain time: the requests ahead on the
  /// eligible endpoints over their summed service rate.
  RouteDecision Shed(const std::vector<EndpointState>& pool,
                     const std::vector<std::int32_t>& eligible, Seconds now) const;
  Seconds DrainOf(const std::vector<EndpointState>& pool,
                  const std::vector<std::int32_t>& endpoints, Seconds now) const;

  RouterConfig config_;
  Rng rng_;
  std::size_t next_ = 0;  // round-robin position
};

/// Every request the gateway received is in exactly one of these at every moment:
/// received == shed + queued + in_flight + completed + failed + cancelled.
struct RouteLedger {
  std::int64_t received = 0;
  std::int64_t shed = 0;       ///< refused by the gateway (429, 503), at once or from its queue
  std::int64_t queued = 0;     ///< waiting in the gateway's queue (routing/wait_queue.h)
  std::int64_t in_flight = 0;  ///< forwarded, not yet ended
  std::int64_t completed = 0;
  std::int64_t failed = 0;     ///< upstream error, refusal or deadline
  std::int64_t cancelled = 0;  ///< the client left
  bool Balanced() const {
    return received == shed + queued + in_flight + completed + failed + cancelled &&
           in_flight >= 0 && queued >= 0;
  }
};

}  // namespace spillway::routing
