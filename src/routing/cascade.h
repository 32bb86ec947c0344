#pragma once
// The model cascade (overload-and-failure-handling.txt §3.3 and its policy's "FALLBACK
// CASCADE"): per model, an ordered chain of fallback pools (7B -> 1B, a quantized 3B, a hosted
// API). A request that its model's pool refuses for load goes on to the next pool of the chain,
// before any refusal reaches the client, with what is left of its TTFT budget. Triggered on
// load (the gateway's own prediction: no endpoint can meet the request's TTFT SLO, or its wait
// in the queue ran out) and on failure (no endpoint takes work, the endpoints refused or could
// not be reached), never on what another model does not change: the tenant's rate limit, the
// gateway's own deadline or drain, a request that is invalid as asked.
//
// The live gateway (gateway/gateway_handler.cc) and the simulator (sim/gateway_front.h) ask
// these same questions. Pure: no clock, no I/O.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.h"

namespace spillway::routing {

/// Whether a pool's refusal with `reason` lets the request go on to the next pool of its
/// cascade. `reason` is an overload-contract token (api/overload_contract.h): the gateway's
/// own refusal, or an endpoint's X-Overload-Reason passed on; empty for an endpoint's 429 or
/// 503 that named none (a foreign engine's refusal for load). True for every refusal for load
/// or capacity; false for rate_limited (the tenant's own quota, the same at every model),
/// request_timeout (the deadline is the request's, not the pool's) and the 400s of a request
/// that can never be served as asked.
bool CascadesOn(std::string_view reason);

/// The least TTFT budget worth sending a request on with: below it, a fallback's first token
/// would arrive after the client's SLO anyway.
inline constexpr Seconds kMinCascadeBudgetS = 0.05;

/// The TTFT SLO the next pool of the cascade gets: `slo_s` less the `elapsed_s` the request
/// spent on the pools before (waiting, refused attempts); nullopt when less than
/// kMinCascadeBudgetS is left.
std::optional<Seconds> CascadeBudget(Seconds slo_s, Seconds elapsed_s);

// The order of the cascade (gateway config `cascade.order`): the steps a request is offered to,
// in turn, until one takes it.
//   cache     the gateway's exact-result cache (routing/result_cache.h): an answer stored for
//             the same request of the same tenant (the drivers without a cache skip it);
//   primary   the model's own pool, the request as asked;
//   clamp     the pools stepped before it that have a clamp (quality degradation, §3.3:
//             max_tokens 256 -> 64), the request with max_tokens clamped;
//   fallback  the model's fallback pools in order, the request as asked (with the fallback's
//             model);
//   reject    the refusal of the last step tried goes to the client (implied at the end).
// A pool with a clamp takes a request as asked only while it can start it within its
// degrade_ttft_fraction of the TTFT budget (the load threshold, as serve's
// degrade_queue_delay_fraction), when a later clamp step would offer it to that pool again; up
// to the whole budget in its last step. Default: cache, primary, clamp, fallback, reject.
enum class CascadeStep : std::uint8_t { kCache, kPrimary, kClamp, kFallback, kReject };
/// "cache", "primary", "clamp", "fallback", "reject"; false for anything else.
bool ParseCascadeStep(std::string_view name, CascadeStep* out);
std::string_view ToString(CascadeStep step);
std::vector<CascadeStep> DefaultCascadeOrder();
/// Empty when `order` is an order: primary named, each step at most once, clamp and fallback
/// (when given) after primary, reject (when given) last; else what is wrong, as a sentence.
std::string CascadeOrderError(const std::vector<CascadeStep>& order);

/// A pool's quality degradation: max_tokens clamped to `max_tokens` (0: none) above the load
/// threshold, a predicted TTFT over `ttft_fraction` of the request's TTFT budget.
struct DegradeConfig {
  std::int32_t max_tokens = 0;
  double ttft_fraction = 0.5;
  bool operator==(const DegradeConfig&) const = default;
};

/// One offer of the request: to the cache, or to one pool.
struct CascadeStage {
  CascadeStep step = CascadeStep::kPrimary;  ///< cache, primary, clamp or fallback
  std::size_t pool = 0;  ///< index into the chain: 0 the model's own pool, then its fallbacks
  std::int32_t clamp_max_tokens = 0;  ///< > 0: the request's max_tokens at most this
  /// The pool takes the request only if it can start it within this fraction of what is left
  /// of the TTFT budget.
  double slo_fraction = 1;
  /// Whether the request may wait in the pool's queue: only in the pool's last stage (a wait
  /// in an earlier one would hold a request a later stage of the same pool can take now).
  bool may_wait = true;
};

/// The stages of a request's cascade: `order` over its `chain` (the degradation of the model's
/// own pool, then of each fallback in order). Without `cascade` (the key or the request opted
/// out) the fallback step is skipped. At least the primary stage. A cache stage names pool 0.
std::vector<CascadeStage> PlanCascade(const std::vector<CascadeStep>& order,
                                      const std::vector<DegradeConfig>& chain, bool cascade);

/// The max_tokens a clamped stage sends: `clamp` when the request asked for more or for none
/// (the engine's default may be anything up to its context), else nullopt (no change).
std::optional<std::int32_t> ClampedMaxTokens(std::optional<std::int32_t> asked, std::int32_t clamp);

}  // namespace spillway::routing
