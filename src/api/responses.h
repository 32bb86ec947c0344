#pragma once
// OpenAI response bodies and Server-Sent Events framing, as JSON text built with Boost.JSON.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/openai_types.h"

namespace spillway::api {

/// What every response of one request shares.
struct ResponseMeta {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string id;              ///< "cmpl-..." or "chatcmpl-..."
  std::int64_t created_s = 0;  ///< Unix seconds
  std::string model;
};

/// Non-streaming body: "text_completion" with choices[0].text, or "chat.completion" with
/// choices[0].message {role "assistant", content}; finish_reason ("stop", "length", ...);
/// usage {prompt_tokens, completion_tokens, total_tokens}.
std::string CompletionJson(const ResponseMeta& meta, std::string_view text,
                           std::string_view finish_reason, const Usage& usage);

/// One streaming chunk ("text_completion" or "chat.completion.chunk" with choices[0].delta):
/// `text` is the new text (for chat the first chunk also carries role "assistant" when
/// `first` is true); finish_reason is null unless given. `usage` null unless given (the final
/// usage-only chunk has empty choices, per stream_options.include_usage).
std::string StreamChunkJson(const ResponseMeta& meta, std::string_view text, bool first,
                            std::optional<std::string_view> finish_reason);
std::string UsageChunkJson(const ResponseMeta& meta, const Usage& usage);

/// {"error": {"message", "type", "param", "code"}}; empty param/code render as null.
std::string ErrorJson(const ApiError& error);

/// GET /v1/models body: one model, owned_by "spillway", plus a "spillway" object describing
/// the executor (e.g. {"executor": "emulated:seed-a100-7b", "emulated": true, "note": ...}).
std::string ModelsJson(std::string_view model, std::int64_t created_s, std::string_view executor,
                       bool emulated, std::int32_t max_model_len);

/// The model ids of a GET /v1/models body ({"data": [{"id": ...}, ...]}), in order; empty when
/// the body is not such a list. FirstModelId: the first, if any.
std::vector<std::string> ModelIds(std::string_view models_json);
std::optional<std::string> FirstModelId(std::string_view models_json);

/// GET /v1/models/{model} body: the one model object of ModelsJson's list (OpenAI's
/// "Retrieve model").
std::string ModelJson(std::string_view model, std::int64_t created_s, std::string_view executor,
                      bool emulated, std::int32_t max_model_len);

/// SSE framing: "data: <json>\n\n"; the stream ends with kSseDone. `json` must be one line,
/// as Boost.JSON's serialize (and every function above) produces: a raw newline would end the
/// SSE field early.
std::string SseData(std::string_view json);
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

}  // namespace spillway::api
