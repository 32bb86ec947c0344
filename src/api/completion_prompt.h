#pragma once
// The `prompt` of a /v1/completions request (OpenAI API reference, "Create completion":
// "string or array" of strings, token ids or arrays of token ids). Internal to src/api.

#include <boost/json/fwd.hpp>

#include "api/json_fields.h"
#include "api/openai_types.h"
#include "api/request_parser.h"

namespace spillway::api {

/// Reads body["prompt"] into out->prompt_text or out->prompt_token_ids. Accepts a string, a
/// list of token ids, a list with one string or a list with one list of token ids. Errors
/// (all 400, param "prompt"): missing (code missing_required_parameter); wrong shape or a
/// token id that is not an integer (invalid_type); an empty prompt, a token id outside
/// [0, 2^31), more than limits.max_prompt_token_ids ids (invalid_value); several prompts
/// (batch_not_supported).
json_fields::Status ParseCompletionPrompt(const boost::json::object& body,
                                          const RequestLimits& limits, CompletionRequest* out);

}  // namespace spillway::api
