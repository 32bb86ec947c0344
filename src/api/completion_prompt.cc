#include "api/completion_prompt.h"

#include <limits>
#include <string>

#include <boost/json.hpp>

namespace spillway::api {
namespace {

namespace json = boost::json;
using json_fields::Invalid;
using json_fields::kInvalidType;
using json_fields::kInvalidValue;
using json_fields::Status;

constexpr std::string_view kPromptParam = "prompt";
constexpr std::string_view kShapes =
    "a string, an array of token ids, or an array holding one string or one array of token ids";
constexpr std::int64_t kMaxTokenId = std::numeric_limits<std::int32_t>::max();

/// An empty prompt leaves nothing to condition on; the server rejects it rather than
/// generating from an implicit beginning-of-sequence token.
ApiError EmptyPrompt(const json::value& got) {
  return Invalid(kPromptParam, "a non-empty string or a non-empty array of token ids", got,
                 kInvalidValue);
}

Status ReadText(const json::string& text, const json::value& got, CompletionRequest* out) {
  if (text.empty()) {
    return EmptyPrompt(got);
  }
  out->prompt_text.assign(text.data(), text.size());
  return {};
}

/// `got` names the whole prompt in errors; `ids` may be `got` itself or its only element.
Status ReadTokenIds(const json::array& ids, const json::value& got, const RequestLimits& limits,
                    CompletionRequest* out) {
  if (ids.empty()) {
    return EmptyPrompt(got);
  }
  if (ids.size() > limits.max_prompt_token_ids) {
    ApiError error =
        Invalid(kPromptParam,
                "an array of at most " + std::to_string(limits.max_prompt_token_ids) + " token ids",
                got, kInvalidValue);
    error.message += " (" + std::to_string(ids.size()) + " token ids)";
    return error;
  }
  out->prompt_token_ids.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::optional<std::int64_t> id = json_fields::AsInteger(ids[i]);
    if (!id.has_value() || *id < 0 || *id > kMaxTokenId) {
      ApiError error =
          Invalid(kPromptParam, "token ids that are integers in [0, 2147483647]", ids[i],
                  json_fields::IsWholeNumber(ids[i]) ? kInvalidValue : kInvalidType);
      error.message += " at index " + std::to_string(i);
      out->prompt_token_ids.clear();
      return error;
    }
    out->prompt_token_ids.push_back(static_cast<std::int32_t>(*id));
  }
  return {};
}

Status ReadPromptArray(const json::array& array, const json::value& got,
                       const RequestLimits& limits, CompletionRequest* out) {
  if (array.empty()) {
    return EmptyPrompt(got);
  }
  const json::value& first = array[0];
  if (!first.is_string() && !first.is_array()) {
    return ReadTokenIds(array, got, limits, out);  // a flat list of token ids
  }
  if (array.size() > 1) {
    ApiError error;
    error.message = "'prompt' holds " + std::to_string(array.size()) +
                    " prompts; batches are not supported, send one prompt per request";
    error.param = std::string(kPromptParam);
    error.code = "batch_not_supported";
    return error;
  }
  if (const json::string* text = first.if_string()) {
    return ReadText(*text, got, out);
  }
  return ReadTokenIds(first.get_array(), got, limits, out);
}

}  // namespace

Status ParseCompletionPrompt(const json::object& body, const RequestLimits& limits,
                             CompletionRequest* out) {
  const json::value* prompt = json_fields::Find(body, kPromptParam);
  if (prompt == nullptr) {
    return json_fields::Missing(kPromptParam);
  }
  if (const json::string* text = prompt->if_string()) {
    return ReadText(*text, *prompt, out);
  }
  if (const json::array* array = prompt->if_array()) {
    return ReadPromptArray(*array, *prompt, limits, out);
  }
  return Invalid(kPromptParam, kShapes, *prompt, kInvalidType);
}

}  // namespace spillway::api
