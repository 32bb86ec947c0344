#pragma once
// Follows one streamed response at the client: when the first content event arrived (TTFT),
// the gaps between content events (ITL), how many tokens were generated, and whether the
// stream ended with [DONE] or an error event. Times are seconds on the caller's clock. Pure.

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/types.h"
#include "loadgen/stream_chunk.h"

namespace spillway::loadgen {

class StreamTracker {
 public:
  /// One SSE data payload received at `now`. Returns the gap since the previous content event
  /// when this payload carries content after an earlier one (an inter-token latency sample).
  std::optional<Seconds> OnPayload(std::string_view data, Seconds now);

  /// True once [DONE] or an error event arrived: nothing more is expected.
  bool ended() const { return done_ || error_.has_value(); }
  bool saw_done() const { return done_; }
  /// Arrival time of the first content event; kNever when none came.
  Seconds first_token_s() const { return first_token_s_; }
  /// usage.completion_tokens when the server sent it, else the number of content events.
  std::int32_t output_tokens() const;
  std::int64_t content_events() const { return content_events_; }
  std::int64_t malformed_payloads() const { return malformed_; }
  /// The first error event of the stream.
  const std::optional<StreamError>& error() const { return error_; }

 private:
  Seconds first_token_s_ = kNever;
  Seconds last_token_s_ = kNever;
  std::int64_t content_events_ = 0;
  std::int64_t malformed_ = 0;
  std::optional<std::int64_t> usage_tokens_;
  std::optional<StreamError> error_;
  bool done_ = false;
};

}  // namespace spillway::loadgen
