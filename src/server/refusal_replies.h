#pragma once
// The bodies and headers of the replies that refuse a request before it runs: an overload
// refusal (429/503, from the admission decision and the overload contract) and a request that
// can never be served as asked (400). Pure: no Asio, no clock but the Unix time of
// X-RateLimit-Reset.

#include <cstdint>
#include <string>

#include "admission/admission.h"
#include "api/openai_types.h"
#include "engine/engine_config.h"
#include "net/response_head.h"

namespace spillway::server {

/// An OpenAI error object: status, message, type, code and the offending param (may be empty).
api::ApiError Error(int status, std::string message, std::string type, std::string code,
                    std::string param = "");

/// An OpenAI error for `reason`'s row of the overload contract: its status and type, the
/// reason as the code (503 "overloaded" for a reason outside the contract). The gateway's own
/// refusals, deadline and SSE error events.
api::ApiError ContractError(std::string_view reason, std::string message);

/// The body of a 429/503 refusal: what was estimated against what, and when to retry; the
/// error type is the contract row's.
api::ApiError OverloadError(const AdmissionDecision& d, double ttft_slo_s,
                            double request_timeout_s);

/// The 400 for a request this engine can never serve as asked, saying why and what would fit.
api::ApiError NeverServable(const AdmissionDecision& d, std::int32_t prompt_tokens,
                            std::int32_t max_tokens, const EngineConfig& engine);

/// The contract's headers for a refusal (generation_end.h ContractHeaders), plus
/// X-RateLimit-Reset (Unix time) for rate_limited.
net::Headers OverloadHeaders(const AdmissionDecision& d);

}  // namespace spillway::server
