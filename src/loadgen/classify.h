#pragma once
// Classification of an attempt's answer (docs/bench.md, "What an answer counts as"). Pure.
//
// At the response head:
//   200                          -> admitted: read the stream
//   429 / 503 / 400              -> rejected at the door, reason = X-Overload-Reason, else the
//                                   error body's code, else "http_<status>"
//   429 queue_deadline_exceeded  -> admitted, then dropped at the queue head (a non-streaming
//                                   server's way of saying it)
//   anything else (504, 500, 401, 404, ...) -> failed, reason as above
// At the end of a 200 stream:
//   error event queue_deadline_exceeded -> dropped at the queue head
//   any other error event        -> failed (504 request_timeout, 503 draining, ...)
//   the client's timeout first   -> abandoned ("ttft_timeout" / "total_timeout")
//   broken before [DONE]         -> failed ("stream_broken")
//   ended normally               -> completed

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/types.h"
#include "loadgen/stream_tracker.h"
#include "report/attempt_record.h"

namespace spillway::loadgen {

/// The queue-head drop reason of Spillway's overload contract (docs/serve.md).
inline constexpr std::string_view kQueueDeadlineExceeded = "queue_deadline_exceeded";

struct HeadVerdict {
  bool admitted = false;                                ///< 200: go on reading the stream
  AttemptOutcome outcome = AttemptOutcome::kCompleted;  ///< when not admitted
  std::string reason;
  Seconds retry_after_s = 0;  ///< the Retry-After header in seconds; 0 when none
};

/// Classifies a response head. `overload_reason` and `retry_after` are the header values
/// (empty when absent); `body` is the (non-200) response body, for its error code.
HeadVerdict ClassifyHead(int status, std::string_view overload_reason, std::string_view retry_after,
                         std::string_view body);

/// How reading a 200 stream stopped.
enum class StreamStop : std::uint8_t {
  kEnded,         ///< end of the response, [DONE], or an error event
  kTtftTimeout,   ///< the client gave up waiting for the first token
  kTotalTimeout,  ///< the client gave up waiting for the end
  kBroken,        ///< the connection failed (reset, EOF mid-body)
};

struct EndVerdict {
  AttemptOutcome outcome = AttemptOutcome::kCompleted;
  std::string reason;
};

/// Classifies the end of a 200 stream from what `stream` saw and why reading stopped.
EndVerdict ClassifyStreamEnd(const StreamTracker& stream, StreamStop stop);

/// Retry-After as delta-seconds (RFC 9110 §10.2.3): a non-negative number; an HTTP-date or
/// junk gives 0 (no hint).
Seconds ParseRetryAfter(std::string_view value);

/// A reply's X-Spillway-Ttft-Forecast (api::kTtftForecastHeader): a decimal number of seconds
/// >= 0; kNever when absent (empty) or anything else.
Seconds ParseTtftForecast(std::string_view value);

/// The priority class a reply's X-Priority-Class header names (the class the server applied):
/// a decimal integer; nullopt when the header is absent (empty) or not a whole int32.
std::optional<std::int32_t> ParsePriorityClass(std::string_view value);

/// True when the scenario client retries after this outcome: refusals other than 400, queue
/// head drops, and with `retry_on_timeout` its own timeouts (as the simulator does).
bool IsRetryable(const AttemptRecord& record, bool retry_on_timeout);

}  // namespace spillway::loadgen
