#pragma once
// Invariants of api::ParseCompletionRequest's result, shared by the request-parser and HTTP
// fuzzers: what a parsed request promises (request_parser.h) and that every error renders as
// valid JSON. A broken invariant aborts through SPILLWAY_CHECK, which libFuzzer reports as a
// crash with the input.

#include <string_view>

#include "api/openai_types.h"
#include "api/request_parser.h"

namespace spillway::fuzz {

/// Parses `body` for `endpoint` under `limits`, checks the outcome's invariants, and counts
/// the prompt's tokens with the ApproxTokenizer as the server does.
void ParseAndCheckRequest(std::string_view body, api::Endpoint endpoint,
                          const api::RequestLimits& limits);

}  // namespace spillway::fuzz
