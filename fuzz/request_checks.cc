// Invariants of a parsed OpenAI request body (see request_checks.h).

#include "request_checks.h"

#include <cmath>
#include <limits>
#include <string>

#include <boost/json.hpp>

#include "api/responses.h"
#include "api/tokenizer.h"
#include "core/check.h"

namespace spillway::fuzz {
namespace {

namespace json = boost::json;

bool IsKnownRole(std::string_view role) {
  return role == "system" || role == "user" || role == "assistant" || role == "tool" ||
         role == "developer";
}

/// An error renders as {"error": {...}} that parses back, including the echoed input in the
/// message (Describe cuts it at a UTF-8 boundary), and frames as one SSE event.
void CheckError(const api::ApiError& error) {
  // 500 only for std::bad_alloc; the fuzzer's malloc limit reports that as a crash instead.
  SPILLWAY_CHECK(error.http_status == 400);
  SPILLWAY_CHECK(error.type == "invalid_request_error");
  SPILLWAY_CHECK(!error.code.empty());
  SPILLWAY_CHECK(!error.message.empty());
  const std::string body = api::ErrorJson(error);
  json::error_code ec;
  const json::value parsed = json::parse(body, ec);
  SPILLWAY_CHECK(!ec);
  SPILLWAY_CHECK(parsed.is_object() && parsed.as_object().contains("error"));
  const std::string sse = api::SseData(body);
  SPILLWAY_CHECK(sse.find('\n') == sse.size() - 2);
}

void CheckPrompt(const api::CompletionRequest& r, const api::RequestLimits& limits) {
  if (r.endpoint == api::Endpoint::kChatCompletions) {
    SPILLWAY_CHECK(r.prompt_text.empty() && r.prompt_token_ids.empty());
    SPILLWAY_CHECK(!r.messages.empty() && r.messages.size() <= limits.max_messages);
    for (const api::ChatMessage& m : r.messages) {
      SPILLWAY_CHECK(IsKnownRole(m.role));
    }
    return;
  }
  SPILLWAY_CHECK(r.messages.empty());
  SPILLWAY_CHECK(r.prompt_text.empty() != r.prompt_token_ids.empty());
  SPILLWAY_CHECK(r.prompt_token_ids.size() <= limits.max_prompt_token_ids);
  for (const std::int32_t id : r.prompt_token_ids) {
    SPILLWAY_CHECK(id >= 0);
  }
}

void CheckRequest(const api::CompletionRequest& r, api::Endpoint endpoint,
                  const api::RequestLimits& limits) {
  SPILLWAY_CHECK(r.endpoint == endpoint);
  CheckPrompt(r, limits);
  SPILLWAY_CHECK(!r.max_tokens.has_value() || *r.max_tokens >= 1);
  SPILLWAY_CHECK(std::isfinite(r.temperature) && r.temperature >= 0 && r.temperature <= 2);
  SPILLWAY_CHECK(std::isfinite(r.top_p) && r.top_p > 0 && r.top_p <= 1);
  SPILLWAY_CHECK(r.stop.size() <= static_cast<std::size_t>(limits.max_stop_sequences));
  for (const std::string& s : r.stop) {
    SPILLWAY_CHECK(!s.empty() && s.size() <= limits.max_stop_bytes);
  }
  SPILLWAY_CHECK(r.stream || !r.include_usage);
}

/// What the server does next with a request (api_handler.cc): count the prompt's tokens and
/// decode a few output ids.
void CountTokens(const api::CompletionRequest& r) {
  const api::ApproxTokenizer tokenizer;
  std::int32_t tokens = 0;
  if (!r.prompt_token_ids.empty()) {
    tokens = static_cast<std::int32_t>(r.prompt_token_ids.size());
    for (std::size_t i = 0; i < r.prompt_token_ids.size() && i < 4; ++i) {
      SPILLWAY_CHECK(!tokenizer.Decode(r.prompt_token_ids[i]).empty());
    }
  } else if (r.endpoint == api::Endpoint::kChatCompletions) {
    tokens = tokenizer.CountChatTokens(r.messages);
  } else {
    tokens = tokenizer.CountTokens(r.prompt_text);
  }
  SPILLWAY_CHECK(tokens >= 1);
}

}  // namespace

void ParseAndCheckRequest(std::string_view body, api::Endpoint endpoint,
                          const api::RequestLimits& limits) {
  const auto result = api::ParseCompletionRequest(body, endpoint, limits);
  if (!result) {
    CheckError(result.error());
    return;
  }
  const api::CompletionRequest& request = *result;
  CheckRequest(request, endpoint, limits);
  CountTokens(request);
}

}  // namespace spillway::fuzz
