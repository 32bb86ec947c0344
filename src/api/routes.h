#pragma once
// The OpenAI-compatible routes `serve` and the gateway answer, by path. Pure.

#include <algorithm>
#include <string_view>

namespace spillway::api {

/// A request target's path, without its query string ("/v1/models?x=1" -> "/v1/models").
/// An absolute-form target (`http://host/v1/completions`, which RFC 9112 section 3.2.2 says a
/// server must accept) gives the same path as its origin form.
inline std::string_view PathOf(std::string_view target) {
  for (const std::string_view scheme : {"http://", "https://"}) {
    if (target.size() > scheme.size() &&
        std::equal(scheme.begin(), scheme.end(), target.begin(),
                   [](char a, char b) { return a == (b | 0x20); })) {
      const auto slash = target.find('/', scheme.size());
      target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
      break;
    }
  }
  const auto q = target.find('?');
  return q == std::string_view::npos ? target : target.substr(0, q);
}

/// Whether `path` is a completion route: /v1/completions or /v1/chat/completions.
inline bool IsCompletionsPath(std::string_view path) {
  return path == "/v1/completions" || path == "/v1/chat/completions";
}

}  // namespace spillway::api
