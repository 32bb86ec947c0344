#pragma once
// What a cascade stage (routing/cascade.h) makes of the client's request at the gateway: its
// body as the stage sends it (another model's name, max_tokens clamped), and the client's
// Cache-Control directives, which decide whether the cache step may answer it or keep its
// answer. Used by gateway_handler.cc.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "net/http_connection.h"

namespace spillway::gateway {

/// `body` (a JSON object: the parse accepted it) as a cascade stage sends it, into `out`: with
/// `model` when not empty, and max_tokens (and, for `chat`, max_completion_tokens, which wins
/// over it there) set to `clamp` when given. False when `body` is not a JSON object or holds a
/// number Boost.JSON cannot write back (the stage is then skipped: the request is only sent as
/// its client wrote it).
bool StageBody(const std::string& body, bool chat, std::string_view model,
               std::optional<std::int32_t> clamp, std::string* out);

/// Whether a Cache-Control header of `r` (any of them) names `directive` (RFC 9111 §5.2: a
/// comma-separated list, directives compared case-insensitively, an argument after `=`).
bool HasCacheDirective(const net::Request& r, std::string_view directive);

}  // namespace spillway::gateway
