#include "api/tokenizer.h"

#include <array>
#include <limits>

namespace spillway::api {
namespace {

constexpr std::int64_t kMaxTokenCount = std::numeric_limits<std::int32_t>::max();

/// Bytes per token in ApproxTokenizer (help.openai.com: "1 token ~= 4 chars in English").
constexpr std::size_t kBytesPerToken = 4;
/// Chat template overhead (OpenAI cookbook, num_tokens_from_messages): tokens per message,
/// and tokens that prime the assistant's reply.
constexpr std::int64_t kTokensPerMessage = 3;
constexpr std::int64_t kReplyPrimingTokens = 3;

/// Placeholder output words, each with a leading space so that decoded tokens concatenate
/// into readable text. 64 entries: the NATO alphabet, then short common words. ASCII only.
constexpr std::array<std::string_view, 64> kWords = {
    " alpha",  " bravo",  " charlie", " delta", " echo",    " foxtrot",  " golf",    " hotel",
    " india",  " juliet", " kilo",    " lima",  " mike",    " november", " oscar",   " papa",
    " quebec", " romeo",  " sierra",  " tango", " uniform", " victor",   " whiskey", " xray",
    " yankee", " zulu",   " amber",   " basil", " cedar",   " dune",     " ember",   " fern",
    " grove",  " harbor", " iris",    " jade",  " kelp",    " lark",     " maple",   " nectar",
    " olive",  " pearl",  " quartz",  " river", " sage",    " thyme",    " umber",   " vale",
    " willow", " yarrow", " zephyr",  " acorn", " birch",   " cloud",    " dawn",    " elm",
    " flint",  " glade",  " heron",   " isle",  " juniper", " knoll",    " lotus",   " meadow"};

}  // namespace

std::int32_t ApproxTokenizer::CountTokens(std::string_view text) const {
  // ceil(size / 4) without the overflow of (size + 3) / 4 near SIZE_MAX.
  const std::size_t tokens = text.size() / kBytesPerToken + (text.size() % kBytesPerToken != 0);
  return tokens >= static_cast<std::size_t>(kMaxTokenCount)
             ? static_cast<std::int32_t>(kMaxTokenCount)
             : static_cast<std::int32_t>(tokens);
}

std::int32_t ApproxTokenizer::CountChatTokens(const std::vector<ChatMessage>& messages) const {
  std::int64_t total = kReplyPrimingTokens;
  for (const ChatMessage& message : messages) {
    total += kTokensPerMessage + CountTokens(message.content);
    if (total >= kMaxTokenCount) {
      return static_cast<std::int32_t>(kMaxTokenCount);  // saturate; later messages cannot lower it
    }
  }
  return static_cast<std::int32_t>(total);
}

std::string ApproxTokenizer::Decode(std::int32_t token_id) const {
  // Unsigned arithmetic maps negative ids (not produced by executors) to words too.
  const auto index = static_cast<std::uint32_t>(token_id) % kWords.size();
  return std::string(kWords[index]);
}

}  // namespace spillway::api
