#include "loadgen/stream_tracker.h"

#include <algorithm>
#include <limits>

namespace spillway::loadgen {

std::optional<Seconds> StreamTracker::OnPayload(std::string_view data, Seconds now) {
  StreamChunk chunk = ReadStreamChunk(data);
  done_ = done_ || chunk.done;
  malformed_ += chunk.malformed ? 1 : 0;
  if (chunk.completion_tokens.has_value()) {
    usage_tokens_ = chunk.completion_tokens;
  }
  if (chunk.error.has_value() && !error_.has_value()) {
    error_ = std::move(chunk.error);
  }
  if (!chunk.has_content) {
    return std::nullopt;
  }
  ++content_events_;
  std::optional<Seconds> gap;
  if (first_token_s_ == kNever) {
    first_token_s_ = now;
  } else {
    gap = now - last_token_s_;
  }
  last_token_s_ = now;
  return gap;
}

std::int32_t StreamTracker::output_tokens() const {
  const std::int64_t n = usage_tokens_.value_or(content_events_);
  return static_cast<std::int32_t>(
      std::clamp<std::int64_t>(n, 0, std::numeric_limits<std::int32_t>::max()));
}

}  // namespace spillway::loadgen
