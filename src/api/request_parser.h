#pragma once
// Parses and validates OpenAI request bodies. JSON is parsed by Boost.JSON; this file only
// decides what is acceptable and says why not.

#include <string_view>
#include "api/openai_types.h"
#include "core/result.h"

namespace spillway::api {

struct RequestLimits {
  std::int32_t max_stop_sequences = 4;  ///< OpenAI allows up to 4
  std::size_t max_stop_bytes = 256;     ///< per stop string
  std::size_t max_prompt_token_ids = 1 << 20;
  std::size_t max_messages = 4096;
};

/// Parses `body` for `endpoint`. On success returns the request; on failure an ApiError with
/// status 400 and `param` naming the field, for: malformed JSON, a body that is not an object,
/// invalid UTF-8 (Boost.JSON rejects it), wrong types, a missing prompt / messages, a batch of
/// several prompts (code "batch_not_supported"), token ids outside [0, 2^31), max_tokens /
/// max_completion_tokens < 1 or not an integer, n != 1, temperature outside [0, 2] or not
/// finite, top_p outside (0, 1], too many or too long stop strings, stream_options without
/// stream, messages that are not {role, content} objects with a known role (content may be a
/// string or an array of {"type": "text", "text": ...} parts). Unknown fields are ignored, as
/// the OpenAI API does. Never throws.
///
/// Details the OpenAI reference leaves open, decided here: JSON null for an optional field
/// means absent; duplicate keys: the last wins; `model` may be absent or empty (as in vLLM);
/// an empty prompt ("", [], [""], [[]]) and an empty stop string are rejected; numbers with
/// no fraction count as integers (5.0 -> 5); max_completion_tokens is read only for chat,
/// where it wins over max_tokens. Codes: invalid_json (param null; also invalid UTF-8 and
/// nesting deeper than 64), invalid_type, invalid_value, missing_required_parameter,
/// batch_not_supported, n_not_supported, unsupported_content_part (non-text content parts).
/// The only non-400 outcome is 500 "server_error" if memory runs out while parsing.
Result<CompletionRequest, ApiError> ParseCompletionRequest(std::string_view body, Endpoint endpoint,
                                                           const RequestLimits& limits = {});

}  // namespace spillway::api
