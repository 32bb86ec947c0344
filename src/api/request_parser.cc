#include "api/request_parser.h"

#include <algorithm>
#include <array>
#include <limits>
#include <new>
#include <string>

#include <boost/json.hpp>

#include "api/chat_messages.h"
#include "api/completion_prompt.h"
#include "api/json_fields.h"

namespace spillway::api {
namespace {

namespace json = boost::json;
using json_fields::Invalid;
using json_fields::kInvalidType;
using json_fields::kInvalidValue;
using json_fields::Status;

/// Deepest nesting of arrays and objects accepted in a body (Boost.JSON's default is 32). Real
/// requests nest about 5 levels (messages[].content[].image_url); the limit bounds the parser's
/// stack and the recursion that destroys a parsed value.
constexpr std::size_t kMaxDepth = 64;
constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

using FieldParser = Status (*)(const json::object&, const RequestLimits&, CompletionRequest*);

/// Boost.JSON's reason ("syntax error", "too deep", "incomplete JSON", ...) plus the rules.
ApiError MalformedJson(const json::error_code& ec) {
  const std::string rules =
      "The body must be one JSON value, encoded as valid UTF-8 and nested at most " +
      std::to_string(kMaxDepth) + " levels deep.";
  ApiError error;
  error.message =
      "We could not parse the JSON body of your request (" + ec.message() + "). " + rules;
  error.code = "invalid_json";
  return error;
}

/// `prompt` for /v1/completions, `messages` for /v1/chat/completions.
Status ParsePrompt(const json::object& body, const RequestLimits& limits, CompletionRequest* out) {
  return out->endpoint == Endpoint::kChatCompletions ? ParseChatMessages(body, limits, out)
                                                     : ParseCompletionPrompt(body, limits, out);
}

/// `model` (required by OpenAI; optional here, as in vLLM) and `user`: strings.
Status ParseIdentity(const json::object& body, const RequestLimits&, CompletionRequest* out) {
  if (Status status = json_fields::ReadString(body, "model", &out->model); !status) {
    return status;
  }
  return json_fields::ReadString(body, "user", &out->user);
}

/// `max_tokens` and, for chat, `max_completion_tokens` (which OpenAI introduced to replace
/// max_tokens there; it wins when both are given). Both must be integers in [1, 2^31 - 1].
Status ParseMaxTokens(const json::object& body, const RequestLimits&, CompletionRequest* out) {
  std::optional<std::int64_t> max_tokens;
  std::optional<std::int64_t> max_completion_tokens;
  if (Status status = json_fields::ReadInteger(body, "max_tokens", 1, kInt32Max, &max_tokens);
      !status) {
    return status;
  }
  if (out->endpoint == Endpoint::kChatCompletions) {
    if (Status status = json_fields::ReadInteger(body, "max_completion_tokens", 1, kInt32Max,
                                                 &max_completion_tokens);
        !status) {
      return status;
    }
  }
  const std::optional<std::int64_t> chosen =
      max_completion_tokens.has_value() ? max_completion_tokens : max_tokens;
  if (chosen.has_value()) {
    out->max_tokens = static_cast<std::int32_t>(*chosen);
  }
  return {};
}

bool IsTemperature(double t) { return t >= 0 && t <= 2; }
bool IsTopP(double p) { return p > 0 && p <= 1; }

/// OpenAI: temperature "between 0 and 2", top_p in (0, 1] ("0.1 means only the tokens
/// comprising the top 10% probability mass are considered"), seed an integer.
Status ParseSampling(const json::object& body, const RequestLimits&, CompletionRequest* out) {
  if (Status status = json_fields::ReadNumber(body, "temperature", "a number in [0, 2]",
                                              IsTemperature, &out->temperature);
      !status) {
    return status;
  }
  if (Status status =
          json_fields::ReadNumber(body, "top_p", "a number in (0, 1]", IsTopP, &out->top_p);
      !status) {
    return status;
  }
  std::optional<std::int64_t> seed;
  if (Status status = json_fields::ReadInteger(body, "seed", kInt64Min, kInt64Max, &seed);
      !status) {
    return status;
  }
  out->seed = seed;
  return {};
}

/// `n` ("How many completions to generate", OpenAI) must be 1: one request, one choice.
/// `ignore_eos` (vLLM) is a boolean.
Status ParseChoices(const json::object& body, const RequestLimits&, CompletionRequest* out) {
  std::optional<std::int64_t> n;
  if (Status status = json_fields::ReadInteger(body, "n", kInt64Min, kInt64Max, &n); !status) {
    return status;
  }
  if (n.has_value() && *n != 1) {
    return Invalid("n", "1 (one choice per request)", *json_fields::Find(body, "n"),
                   "n_not_supported");
  }
  return json_fields::ReadBool(body, "ignore_eos", &out->ignore_eos);
}

/// One stop sequence: a non-empty string of at most limits.max_stop_bytes UTF-8 bytes. An
/// empty stop string would match before any output, so it is rejected.
Status ReadStopString(const json::value& value, const RequestLimits& limits,
                      CompletionRequest* out) {
  const json::string* text = value.if_string();
  if (text == nullptr) {
    return Invalid("stop", "a string or an array of strings", value, kInvalidType);
  }
  if (text->empty() || text->size() > limits.max_stop_bytes) {
    return Invalid(
        "stop", "non-empty strings of at most " + std::to_string(limits.max_stop_bytes) + " bytes",
        value, kInvalidValue);
  }
  out->stop.emplace_back(text->data(), text->size());
  return {};
}

/// `stop`: "Up to 4 sequences where the API will stop generating" (OpenAI), a string or an
/// array of strings; the limits come from RequestLimits.
Status ParseStop(const json::object& body, const RequestLimits& limits, CompletionRequest* out) {
  const json::value* stop = json_fields::Find(body, "stop");
  if (stop == nullptr) {
    return {};
  }
  if (stop->is_string()) {
    return ReadStopString(*stop, limits, out);
  }
  const json::array* array = stop->if_array();
  if (array == nullptr) {
    return Invalid("stop", "a string or an array of strings", *stop, kInvalidType);
  }
  const auto max_count = static_cast<std::size_t>(std::max(0, limits.max_stop_sequences));
  if (array->size() > max_count) {
    return Invalid("stop", "an array of at most " + std::to_string(max_count) + " strings", *stop,
                   kInvalidValue);
  }
  for (const json::value& element : *array) {
    if (Status status = ReadStopString(element, limits, out); !status) {
      out->stop.clear();
      return status;
    }
  }
  return {};
}

/// `stream` and `stream_options` {include_usage}. OpenAI rejects stream_options unless stream
/// is true ("The 'stream_options' parameter is only allowed when 'stream' is enabled.").
Status ParseStreaming(const json::object& body, const RequestLimits&, CompletionRequest* out) {
  if (Status status = json_fields::ReadBool(body, "stream", &out->stream); !status) {
    return status;
  }
  const json::value* options = json_fields::Find(body, "stream_options");
  if (options == nullptr) {
    return {};
  }
  const json::object* object = options->if_object();
  if (object == nullptr) {
    return Invalid("stream_options", "an object", *options, kInvalidType);
  }
  if (!out->stream) {
    ApiError error;
    error.message =
        "The 'stream_options' parameter is only allowed when 'stream' is enabled, "
        "got stream_options without \"stream\": true";
    error.param = "stream_options";
    error.code = std::string(kInvalidValue);
    return error;
  }
  return json_fields::ReadBool(*object, "include_usage", &out->include_usage,
                               "stream_options.include_usage");
}

constexpr std::array<FieldParser, 7> kFieldParsers = {ParsePrompt,   ParseIdentity, ParseMaxTokens,
                                                      ParseSampling, ParseChoices,  ParseStop,
                                                      ParseStreaming};

Result<CompletionRequest, ApiError> Parse(std::string_view body, Endpoint endpoint,
                                          const RequestLimits& limits) {
  json::monotonic_resource memory;  // outlives `root`, declared below
  json::parse_options options;
  options.max_depth = kMaxDepth;  // allow_invalid_utf8 stays false: invalid UTF-8 is an error
  json::error_code ec;
  const json::value root =
      json::parse(json::string_view(body.data(), body.size()), ec, &memory, options);
  if (ec) {
    return MalformedJson(ec);
  }
  const json::object* object = root.if_object();
  if (object == nullptr) {
    ApiError error = Invalid("body", "a JSON object", root, kInvalidType);
    error.param.clear();  // the whole body, not a parameter: rendered as null
    return error;
  }
  CompletionRequest request;
  request.endpoint = endpoint;
  for (const FieldParser parse_field : kFieldParsers) {
    if (Status status = parse_field(*object, limits, &request); !status) {
      return status.error();
    }
  }
  return request;
}

ApiError InternalError(std::string message) {
  ApiError error;
  error.http_status = 500;
  error.message = std::move(message);
  error.type = "server_error";
  error.code = "internal_error";
  return error;
}

}  // namespace

Result<CompletionRequest, ApiError> ParseCompletionRequest(std::string_view body, Endpoint endpoint,
                                                           const RequestLimits& limits) {
  try {
    return Parse(body, endpoint, limits);
  } catch (const std::bad_alloc&) {
    return InternalError("out of memory while parsing the request body");
  } catch (...) {  // not expected: the readers check kinds before every access
    return InternalError("unexpected error while parsing the request body");
  }
}

}  // namespace spillway::api
