#pragma once
// The OpenAI-compatible routes `serve` and the gateway answer, by path. Pure.

#include <string_view>

namespace spillway::api {

/// A request target's path, without its query string ("/v1/models?x=1" -> "/v1/models").
/// An absolute-form target (`http://host/v1/completions`, which RFC 9112 section 3.2.2 says a
/// server must accept) gives the same path as its origin form (parsed by Boost.URL).
std::string_view PathOf(std::string_view target);

/// Whether `path` is a completion route: /v1/completions or /v1/chat/completions.
inline bool IsCompletionsPath(std::string_view path) {
  return path == "/v1/completions" || path == "/v1/chat/completions";
}

}  // namespace spillway::api
