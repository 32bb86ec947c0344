#include "routing/router.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "sched/block_hashes.h"

namespace spillway::routing {

bool ParseRouterPolicy(std::string_view name, RouterPolicy* out) {
  if (name == "gateway") {
    *out = RouterPolicy::kGateway;
  } else if (name == "round-robin") {
    *out = RouterPolicy::kRoundRobin;
  } else if (name == "least-requests") {
    *out = RouterPolicy::kLeastRequests;
  } else if (name == "llm-d") {
    *out = RouterPolicy::kLlmd;
  } else {
    return false;
  }
  return true;
}

std::string_view ToString(RouterPolicy policy) {
  switch (policy) {
    case RouterPolicy::kGateway:
      return "gateway";
    case RouterPolicy::kRoundRobin:
      return "round-robin";
    case RouterPolicy::kLeastRequests:
      return "least-requests";
    case RouterPolicy::kLlmd:
      return "llm-d";
  }
  return "unknown";
}

bool ParseStaleness(std::string_view name, Staleness* out) {
  if (name == "fail-close") {
    *out = Staleness::kFailClose;
  } else if (name == "fail-open") {
    *out = Staleness::kFailOpen;
  } else {
    return false;
  }
  return true;
}

std::string_view ToString(Staleness staleness) {
  return staleness == Staleness::kFailClose ? "fail-close" : "fail-open";
}

std::shared_ptr<const std::vector<std::uint64_t>> PromptPrefixBlocks(
    const PrefixRouting& prefix, const std::shared_ptr<const PromptSegments>& segments,
    std::int32_t prompt_tokens) {
  if (!prefix.enabled || segments == nullptr) {
    return nullptr;
  }
  std::vector<std::uint64_t> blocks =
      SharedPrefixBlockHashes(segments, prompt_tokens, prefix.block_tokens, prefix.max_blocks);
  if (blocks.empty()) {
    return nullptr;
  }
  return std::make_shared<const std::vector<std::uint64_t>>(std::move(blocks));
}

Router::Router(RouterConfig config) : config_(config), rng_(config.seed) {}

bool Router::Fresh(const EndpointState& endpoint, Seconds now) const {
  return endpoint.MetricsAge(now) <= config_.stale_after_s;
}

RouteDecision Router::Route(const RouteRequest& request, const std::vector<EndpointState>& pool,
                            Seconds now, const PrefixIndex* prefixes) {
  std::vector<std::int32_t> eligible;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    const auto index = static_cast<std::int32_t>(i);
    if (pool[i].takes_work() &&
        std::find(request.exclude.begin(), request.exclude.end(), index) == request.exclude.end()) {
      eligible.push_back(index);
    }
  }
  if (eligible.empty()) {
    RouteDecision d;
    d.verdict = Verdict::kHardLimit;
    d.reason = OverloadReason::kNoEndpoint;
    d.retry_after_s = 1;
    return d;
  }
  RouteDecision d;
  switch (config_.policy) {
    case RouterPolicy::kGateway:
      return Predictive(request, pool, eligible, now, prefixes);
    case RouterPolicy::kRoundRobin:
      d.endpoint = eligible[next_++ % eligible.size()];
      return d;
    case RouterPolicy::kLeastRequests:
      d.endpoint = *std::min_element(eligible.begin(), eligible.end(), [&](auto a, auto b) {
        return pool[a].in_flight() < pool[b].in_flight();
      });
      return d;
    case RouterPolicy::kLlmd:
      return Llmd(request, pool, eligible, now, prefixes);
  }
  return d;
}

std::int32_t Router::MatchedBlocks(const RouteRequest& request, std::int32_t i,
                                   const PrefixIndex* prefixes) {
  if (prefixes == nullptr || request.prefix_blocks == nullptr) {
    return 0;
  }
  return prefixes->Match(static_cast<std::size_t>(i), *request.prefix_blocks);
}

std::int32_t Router::CachedTokens(const RouteRequest& request, std::int32_t matched) const {
  // vLLM's rule: only whole blocks before the last prompt token's (computed to sample from).
  const std::int32_t bt = config_.prefix.block_tokens;
  const std::int32_t usable = request.prompt_tokens > 0 ? (request.prompt_tokens - 1) / bt : 0;
  return std::min(matched, usable) * bt;
}

RouteDecision Router::Predictive(const RouteRequest& request,
                                 const std::vector<EndpointState>& pool,
                                 const std::vector<std::int32_t>& eligible, Seconds now,
                                 const PrefixIndex* prefixes) {
  const Seconds slo = request.ttft_slo_s.value_or(config_.ttft_slo_s);
  struct Candidate {
    std::int32_t endpoint;
    Seconds ttft_s;
    std::int32_t cached_tokens;
  };
  std::vector<Candidate> meets;
  std::optional<Candidate> soonest;  // the lowest prediction of all considered
  Seconds min_prefill_s = kNever;    // the shortest prefill alone, wherever
  std::int32_t most_cached = 0;      // among those that meet the SLO
  for (const std::int32_t i : eligible) {
    const bool fresh = Fresh(pool[i], now);
    if (!fresh && pool[i].exports_metrics() && config_.staleness == Staleness::kFailClose) {
      continue;  // stale, fail-close: counted saturated
    }
    // Believed cached there: counted only where the engine says it caches prefixes.
    const std::int32_t cached = pool[i].load().prefix_caching
                                    ? CachedTokens(request, MatchedBlocks(request, i, prefixes))
                                    : 0;
    const std::int32_t prefill_tokens = request.prompt_tokens - cached;
    const Seconds ttft = pool[i].PredictTtft(prefill_tokens, fresh, request.priority);
    min_prefill_s = std::min(min_prefill_s, pool[i].PredictPrefill(prefill_tokens));
    if (ttft <= slo) {
      meets.push_back({i, ttft, cached});
      most_cached = std::max(most_cached, cached);
    }
    if (!soonest.has_value() || ttft < soonest->ttft_s) {
      soonest = Candidate{i, ttft, cached};
    }
  }
  if (meets.empty() && soonest.has_value() && min_prefill_s > slo &&
      soonest->ttft_s - pool[soonest->endpoint].PredictPrefill(request.prompt_tokens -
                                                               soonest->cached_tokens) <=
          0) {
    // Its own prefill is longer than its SLO even on an idle endpoint, and an endpoint could
    // start it now: no wait would make it fit, so a 429 "retry later" would be a lie (it was
    // told so forever). Sent where it starts soonest; the engine decides (serves it late,
    // refuses it 400 as too long for its context, or refuses it by its own admission). With
    // a wait ahead of it everywhere it is shed as any other: served once a queue is empty.
    RouteDecision d;
    d.endpoint = soonest->endpoint;
    d.predicted_ttft_s = soonest->ttft_s;
    d.cached_tokens = soonest->cached_tokens;
    return d;
  }
  if (meets.empty()) {
    return Shed(pool, eligible, now);
  }
  // Power of two choices: two distinct candidates at random, the lower prediction wins. With a
  // prefix believed cached somewhere, the first of the two is drawn among those that hold the
  // most of it.
  const Candidate* best = &meets.front();
  if (meets.size() > 1) {
    const auto n = static_cast<std::int64_t>(meets.size());
    std::int64_t a = 0;
    if (most_cached > 0) {
      std::vector<std::int64_t> holders;
      for (std::int64_t k = 0; k < n; ++k) {
        if (meets[static_cast<std::size_t>(k)].cached_tokens == most_cached) {
          holders.push_back(k);
        }
      }
      a = holders[static_cast<std::size_t>(
          rng_.UniformInt(0, static_cast<std::int64_t>(holders.size()) - 1))];
    } else {
      a = rng_.UniformInt(0, n - 1);
    }
    std::int64_t b = rng_.UniformInt(0, n - 2);
    b += b >= a ? 1 : 0;
    const Candidate& x = meets[static_cast<std::size_t>(a)];
    const Candidate& y = meets[static_cast<std::size_t>(b)];
    // Predictions within tie_tolerance_s are a tie, which goes to the first drawn (at random):
    // an endpoint measured a few ms faster than another's prior must not take all the load.
    // Both meet the SLO: one believed to hold more of the prompt wins, since the prefill it
    // saves is capacity for the requests after it (measured on scenarios/fleet/mooncake-x3.yaml,
    // docs/prefix-caching.md: more hits and goodput than comparing the predictions).
    const bool x_wins =
        x.cached_tokens > y.cached_tokens ||
        (x.cached_tokens == y.cached_tokens && x.ttft_s <= y.ttft_s + config_.tie_tolerance_s);
    best = x_wins ? &x : &y;
  }
  RouteDecision d;
  d.endpoint = best->endpoint;
  d.predicted_ttft_s = best->ttft_s;
  d.cached_tokens = best->cached_tokens;
  return d;
}

RouteDecision Router::Llmd(const RouteRequest& request, const std::vector<EndpointState>& pool,
                           const std::vector<std::int32_t>& eligible, Seconds now,
                           const PrefixIndex* prefixes) const {
  std::vector<std::int32_t> open;
  for (const std::int32_t i : eligible) {
    const EndpointLoad& load = pool[i].load();
    const bool saturated = pool[i].MetricsAge(now) > kLlmdMetricsStalenessS ||
                           load.num_waiting >= kLlmdQueueDepthThreshold ||
                           load.kv_usage >= kLlmdKvCacheThreshold;
    if (!saturated) {
      open.push_back(i);
    }
  }
  if (open.empty()) {
    if (request.priority > 0) {  // sheddable
      return Shed(pool, eligible, now);
    }
    open = eligible;  // saturated everywhere, but not sheddable: dispatched all the same
  }
  std::int32_t min_queue = std::numeric_limits<std::int32_t>::max();
  std::int32_t max_queue = 0;
  for (const std::int32_t i : open) {
    min_queue = std::min(min_queue, pool[i].load().num_waiting);
    max_queue = std::max(max_queue, pool[i].load().num_waiting);
  }
  // The default profile's weights: queue 2, KV 2, prefix-cache 3 (with prefix routing off
  // or no blocks to match, queue and KV alone, equal as before).
  const std::size_t blocks = request.prefix_blocks != nullptr ? request.prefix_blocks->size() : 0;
  RouteDecision d;
  double best_score = -1;
  for (const std::int32_t i : open) {
    const EndpointLoad& load = pool[i].load();
    const double queue_score =
        max_queue == min_queue
            ? 1.0
            : 1.0 - static_cast<double>(load.num_waiting - min_queue) / (max_queue - min_queue);
    const std::int32_t matched = blocks > 0 ? MatchedBlocks(request, i, prefixes) : 0;
    const double prefix_score = blocks > 0 ? static_cast<double>(matched) / blocks : 0.0;
    const double score = 2 * queue_score + 2 * (1.0 - load.kv_usage) + 3 * prefix_score;
    if (score > best_score) {  // ties keep the lower index
      best_score = score;
      d.endpoint = i;
      d.cached_tokens = load.prefix_caching ? CachedTokens(request, matched) : 0;
    }
  }
  return d;
}

RouteDecision Router::Shed(const std::vector<EndpointState>& pool,
                           const std::vector<std::int32_t>& eligible, Seconds now) const {
  RouteDecision d;
  d.verdict = Verdict::kShed;
  d.reason = OverloadReason::kQueueDelayExceeded;
  d.retry_after_s = DrainOf(pool, eligible, now);
  return d;
}

Seconds Router::DrainTime(const std::vector<EndpointState>& pool, Seconds now) const {
  std::vector<std::int32_t> open;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    if (pool[i].takes_work()) {
      open.push_back(static_cast<std::int32_t>(i));
    }
  }
  return DrainOf(pool, open, now);
}

Seconds Router::DrainOf(const std::vector<EndpointState>& pool,
                        const std::vector<std::int32_t>& endpoints, Seconds now) const {
  double ahead = 0;
  double rate = 0;
  for (const std::int32_t i : endpoints) {
    ahead += pool[i].QueueAhead(Fresh(pool[i], now));
    rate += pool[i].ServiceRate();
  }
  const Seconds drain_s = rate > 0 ? ahead / rate : 1.0;
  return std::clamp(std::ceil(drain_s), 1.0, 3600.0);
}

}  // namespace spillway::routing
