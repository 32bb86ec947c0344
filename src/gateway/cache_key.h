#pragma once
// The key of a request in the exact-result cache (routing/result_cache.h), as the live gateway
// makes it: the tenant, the model asked for, the route (completions or chat) and the request's
// canonical body (Boost.JSON, every object's keys sorted), so the same fields in another order
// are the same request. Numbers are compared as Boost.JSON reads them (0 and 0.0 differ).

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace spillway::gateway {

/// The key of a request: `tenant`, `model`, `path` and `body` with every object's keys sorted,
/// length-prefixed so no field can run into the next. Nullopt when `body` is not a JSON object
/// or holds a number beyond a double's range (two such numbers would read the same).
std::optional<std::string> ResultCacheKey(std::string_view tenant, std::string_view model,
                                          std::string_view path, std::string_view body);

/// Whether every number in `v` survives a round trip through Boost.JSON: a literal beyond a
/// double's range parses to an infinity, which it writes as "Infinity" (not JSON).
bool FiniteNumbers(const boost::json::value& v);

}  // namespace spillway::gateway
