#pragma once
// Pluggable tokenizer. The shipped one is an approximation: without the model's vocabulary the
// server can only estimate how many tokens a text prompt has. Token-id prompts are exact.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/openai_types.h"

namespace spillway::api {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  /// Tokens in `text` (>= 1 for non-empty text, 0 for empty).
  virtual std::int32_t CountTokens(std::string_view text) const = 0;
  /// Tokens of a chat prompt: the messages' contents plus the chat template's overhead.
  virtual std::int32_t CountChatTokens(const std::vector<ChatMessage>& messages) const = 0;
  /// Text of one output token id; always valid UTF-8.
  virtual std::string Decode(std::int32_t token_id) const = 0;
  virtual std::string_view name() const = 0;
};

/// Approximate tokenizer: ceil(UTF-8 bytes / 4), OpenAI's rule of thumb for English ("one
/// token is about 4 characters", help.openai.com "What are tokens and how to count them");
/// chat adds 3 tokens per message and 3 to prime the reply (the OpenAI cookbook's
/// num_tokens_from_messages for gpt-3.5/4 chat templates). Decode maps ids to placeholder
/// words (" alpha", " bravo", ...): ASCII, deterministic, meaningless, as the emulated
/// executor's tokens are.
class ApproxTokenizer final : public Tokenizer {
 public:
  std::int32_t CountTokens(std::string_view text) const override;
  std::int32_t CountChatTokens(const std::vector<ChatMessage>& messages) const override;
  std::string Decode(std::int32_t token_id) const override;
  std::string_view name() const override { return "approx-4-bytes-per-token"; }
};

}  // namespace spillway::api
