#pragma once
// The token usage an endpoint's answer reports (OpenAI's `usage`: total_tokens, else
// prompt_tokens + completion_tokens), read to correct a tenant's token reservation
// (gateway/shared_quota.h). A JSON answer carries it in its body; a stream only in its last
// event, when the client asked for stream_options.include_usage.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace spillway::gateway {

/// The tokens the JSON object `json` reports in its `usage`; nullopt when it is not JSON or
/// reports none.
std::optional<std::int64_t> UsageTokens(std::string_view json);

/// Reads an SSE stream chunk by chunk, keeping the last usage a `data:` line reported (OpenAI
/// and vLLM send each event's JSON on one line). Holds one line, up to kMaxLineBytes (a longer
/// one is skipped).
class StreamUsage {
 public:
  static constexpr std::size_t kMaxLineBytes = 64 * 1024;
  void Feed(std::string_view chunk);
  std::optional<std::int64_t> tokens() const { return tokens_; }

 private:
  std::string line_;  ///< the bytes of the line not yet ended
  bool too_long_ = false;
  std::optional<std::int64_t> tokens_;
};

}  // namespace spillway::gateway
