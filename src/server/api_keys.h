#pragma once
// API keys and priority classes as `spillway serve` and `spillway gateway` read them from a
// request: `Authorization: Bearer KEY` (scheme case-insensitive, RFC 9110 §11.1) against the
// configured keys, and the X-Priority-Class header. Pure.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "admission/admission.h"
#include "api/openai_types.h"
#include "config/server_config.h"

namespace spillway::server {

/// The key an Authorization header value names: nullptr when keys are configured and it names
/// none of them; a shared default key (tenant "default", no limit) when none are configured.
const ApiKey* FindApiKey(const std::map<std::string, ApiKey>& keys, std::string_view authorization);

/// The tenants' token buckets the keys give: the first key of a tenant with rate_rps > 0 sets
/// its rate and burst.
std::map<std::string, TenantLimit, std::less<>> TenantLimitsOf(
    const std::map<std::string, ApiKey>& keys);

/// The door in front of an engine or a pool (serve's ApiHandler, the gateway, the simulator's
/// front): an AdmissionController with the keys' tenants' buckets (TenantLimitsOf) and no
/// policy, asked with DecideRateLimit.
AdmissionConfig TenantDoorConfig(const std::map<std::string, ApiKey>& keys);

/// 401 invalid_api_key, for a request without a configured key.
api::ApiError Unauthorized();

/// The most patient priority class, as in scenario files (classes[].priority).
inline constexpr std::int32_t kMaxPriorityClass = 1 << 20;

/// The X-Priority-Class header's class (an integer in [0, kMaxPriorityClass]); nullopt when it
/// is not one.
std::optional<std::int32_t> ParsePriorityClass(std::string_view header);

/// The class a request of `key` runs as: its X-Priority-Class `header` (empty: not sent), never
/// more urgent than the key's max_priority; the key's max_priority without the header; nullopt
/// when the header is not a class (400 invalid_priority).
std::optional<std::int32_t> PriorityFor(const ApiKey& key, std::string_view header);

/// 400 invalid_priority, for an X-Priority-Class that is not one class, given once.
api::ApiError InvalidPriority();

}  // namespace spillway::server
