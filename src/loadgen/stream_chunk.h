#pragma once
// What one SSE `data:` payload of an OpenAI-compatible streaming completion says, read with
// Boost.JSON: generated text, the usage totals (stream_options.include_usage), an error event,
// or the "[DONE]" sentinel. Knows the shapes of Spillway, vLLM and llama.cpp's server:
//   {"choices":[{"text":"..."}], "usage": null | {"completion_tokens": N, ...}}
//   {"choices":[{"delta":{"content":"..."}}]}                       (chat chunks)
//   {"error":{"message","type","param","code"}}   (code a string, or vLLM's integer)
//   {"object":"error","message","type","code"}    (an error response sent as a chunk)

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace spillway::loadgen {

struct StreamError {
  std::string code;  ///< error.code as text ("queue_deadline_exceeded", "400"); else its type
  std::string message;
};

struct StreamChunk {
  bool done = false;       ///< the "[DONE]" sentinel
  bool malformed = false;  ///< not JSON, or not an object
  /// choices[0] carries non-empty text (`text`, or `delta.content` for chat): one content
  /// event, usually one token (a server may batch several into one chunk).
  bool has_content = false;
  std::optional<std::int64_t> completion_tokens;  ///< usage.completion_tokens when present
  std::optional<StreamError> error;
};

/// Reads one payload. Never throws: malformed input sets `malformed`.
StreamChunk ReadStreamChunk(std::string_view data);

/// The error of a non-streaming error body ({"error": {...}} or {"object":"error", ...});
/// nullopt when `body` is not such JSON.
std::optional<StreamError> ReadErrorBody(std::string_view body);

}  // namespace spillway::loadgen
