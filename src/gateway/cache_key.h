#pragma once
// The key of a request in the exact-result cache (routing/result_cache.h), as the live gateway
// makes it: the tenant, the model asked for and the request's canonical body (Boost.JSON, every
// object's keys sorted), so the same fields in another order are the same request.

#include <optional>
#include <string>
#include <string_view>

namespace spillway::gateway {

/// The key of a request: `tenant`, `model` and `body` with every object's keys sorted,
/// length-prefixed so no field can run into the next. Nullopt when `body` is not a JSON
/// object.
std::optional<std::string> ResultCacheKey(std::string_view tenant, std::string_view model,
                                          std::string_view body);

}  // namespace spillway::gateway
