#pragma once
// OpenAI-compatible request and error types for /v1/completions and /v1/chat/completions
// (https://platform.openai.com/docs/api-reference/completions, .../chat/create), with the
// vLLM extension `ignore_eos`. No sockets: the server hands bodies in and gets values out.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spillway::api {

/// Emulator only: the output length at which `spillway serve`'s emulated model samples EOS
/// (an integer >= 1; the request then ends with finish_reason "stop" before max_tokens unless
/// it sets ignore_eos). `spillway bench` sends it for scenario classes with a max_tokens cap so
/// the emulated engine generates the hidden length a real model would; admission never reads
/// it, and a real engine ignores it. docs/serve.md.
inline constexpr std::string_view kEmulatedOutputTokensHeader = "X-Spillway-Emulated-Output-Tokens";

/// On an admitted reply of `spillway serve` under the forecast policy: the engine's forecast
/// of the request's TTFT at admission, seconds (a decimal, e.g. "0.4125"), what it was admitted
/// on (docs/serve.md, "Admission by forecast"). `spillway bench` records it per attempt
/// (`ttft_forecast_s`) and calibrates it against the TTFT it measured.
inline constexpr std::string_view kTtftForecastHeader = "X-Spillway-Ttft-Forecast";
/// The request's flow for fair shedding (admission/fair_share.h), the Gateway API Inference
/// Extension's flow-control fairness ID: core/fairness_id.h says which values are valid.
/// Without it a request's flow is its tenant.
inline constexpr std::string_view kFairnessIdHeader = "x-gateway-inference-fairness-id";

enum class Endpoint : std::uint8_t { kCompletions, kChatCompletions };

struct ChatMessage {
  std::string role;  ///< "system", "user", "assistant", "tool", "developer"
  std::string content;
};

/// A validated request. Exactly one of prompt_token_ids / prompt_text / messages is the prompt.
struct CompletionRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string model;
  std::vector<std::int32_t> prompt_token_ids;  ///< prompt given as token ids (exact count)
  std::string prompt_text;                     ///< prompt given as text (/v1/completions)
  std::vector<ChatMessage> messages;           ///< /v1/chat/completions
  std::optional<std::int32_t> max_tokens;      ///< max_tokens or max_completion_tokens
  bool stream = false;
  bool include_usage = false;  ///< stream_options.include_usage
  std::vector<std::string> stop;
  std::optional<std::int64_t> seed;
  double temperature = 1.0;
  double top_p = 1.0;
  bool ignore_eos = false;
  std::string user;
};

/// An OpenAI-style error: {"error": {"message", "type", "param", "code"}} with an HTTP status.
struct ApiError {
  int http_status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  ///< the offending field, or empty (rendered as null)
  std::string code;   ///< a stable token, or empty (rendered as null)
};

/// Token usage of one response.
struct Usage {
  std::int32_t prompt_tokens = 0;
  std::int32_t completion_tokens = 0;
};

}  // namespace spillway::api
