#pragma once
// Helpers for the request parser tests: minimal valid bodies, and parsing to a request or to
// the expected 400 error.

#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "api/request_parser.h"

namespace spillway::api::testing_util {

inline constexpr Endpoint kCmpl = Endpoint::kCompletions;
inline constexpr Endpoint kChat = Endpoint::kChatCompletions;

/// {"model": "m", "prompt": "Hello"} plus `extra` members (", "-joined JSON text, may be empty).
inline std::string CompletionBody(std::string_view extra = {}) {
  return R"({"model": "m", "prompt": "Hello")" + (extra.empty() ? "" : ", " + std::string(extra)) +
         "}";
}

/// {"model": "m", "messages": [{"role": "user", "content": "Hi"}]} plus `extra` members.
inline std::string ChatBody(std::string_view extra = {}) {
  return R"({"model": "m", "messages": [{"role": "user", "content": "Hi"}])" +
         (extra.empty() ? "" : ", " + std::string(extra)) + "}";
}

/// The parsed request; records a test failure (and returns a default request) on an error.
inline CompletionRequest ParseOk(std::string_view body, Endpoint endpoint = Endpoint::kCompletions,
                                 const RequestLimits& limits = {}) {
  auto result = ParseCompletionRequest(body, endpoint, limits);
  if (!result) {
    ADD_FAILURE() << "rejected " << body << ": " << result.error().message;
    return {};
  }
  return *std::move(result);
}

/// The error; records a test failure (and returns a default error) when the body parsed.
inline ApiError ParseError(std::string_view body, Endpoint endpoint = Endpoint::kCompletions,
                           const RequestLimits& limits = {}) {
  auto result = ParseCompletionRequest(body, endpoint, limits);
  if (result) {
    ADD_FAILURE() << "accepted " << body;
    return {};
  }
  return result.error();
}

/// Success when `body` is rejected with HTTP 400, type invalid_request_error, and exactly
/// `param` and `code`.
inline ::testing::AssertionResult Rejected(std::string_view body, Endpoint endpoint,
                                           std::string_view param, std::string_view code,
                                           const RequestLimits& limits = {}) {
  auto result = ParseCompletionRequest(body, endpoint, limits);
  if (result) {
    return ::testing::AssertionFailure() << "accepted " << body;
  }
  const ApiError error = result.error();
  if (error.http_status != 400 || error.type != "invalid_request_error" || error.param != param ||
      error.code != code) {
    return ::testing::AssertionFailure()
           << "for " << body << " got status " << error.http_status << ", type " << error.type
           << ", param '" << error.param << "', code '" << error.code << "', message "
           << error.message;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace spillway::api::testing_util
