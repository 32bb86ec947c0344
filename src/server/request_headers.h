#pragma once
// Spillway's own request headers, read and checked before a request reaches the engine: the
// emulator-only hidden output length and the fairness ID. A value that fails its check is a
// 400 (the caller says which).

#include <cstdint>
#include <optional>
#include <string>

#include "net/http_connection.h"

namespace spillway::server {

/// The emulator-only hidden output length (api::kEmulatedOutputTokensHeader): 0 when absent,
/// nullopt when given more than once or not as an integer in [1, 2^24].
std::optional<std::int32_t> EmulatedOutputTokens(const net::Request& request);

/// The request's fairness ID (api::kFairnessIdHeader): "" when absent, nullopt when given more
/// than once or not a valid one (core/fairness_id.h).
std::optional<std::string> FairnessId(const net::Request& request);
/// The message of the 400 invalid_fairness_id that a nullopt FairnessId gets (serve and the
/// gateway answer alike).
std::string InvalidFairnessIdMessage();

}  // namespace spillway::server
