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

#include <optional>
#include <string_view>

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

}  // namespace spillway::routing
