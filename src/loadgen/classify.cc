#include "loadgen/classify.h"

#include "api/overload_contract.h"

#include <charconv>
#include <cmath>

#include "loadgen/stream_chunk.h"

namespace spillway::loadgen {

HeadVerdict ClassifyHead(int status, std::string_view overload_reason, std::string_view retry_after,
                         std::string_view body) {
  HeadVerdict v;
  if (status == 200) {
    v.admitted = true;
    return v;
  }
  v.retry_after_s = ParseRetryAfter(retry_after);
  if (!overload_reason.empty()) {
    v.reason = std::string(overload_reason);
  } else if (const std::optional<StreamError> e = ReadErrorBody(body);
             e.has_value() && !e->code.empty()) {
    v.reason = e->code;
  } else {
    v.reason = "http_" + std::to_string(status);
  }
  if (status == 429 && v.reason == kQueueDeadlineExceeded) {
    v.outcome = AttemptOutcome::kDroppedAtQueueHead;
  } else if (status == 429 || status == 503 || status == 400) {
    v.outcome = AttemptOutcome::kRejected;
  } else {
    v.outcome = AttemptOutcome::kFailed;
  }
  return v;
}

EndVerdict ClassifyStreamEnd(const StreamTracker& stream, StreamStop stop) {
  if (const std::optional<StreamError>& e = stream.error(); e.has_value()) {
    const std::string code = e->code.empty() ? std::string("stream_error") : e->code;
    return {code == kQueueDeadlineExceeded ? AttemptOutcome::kDroppedAtQueueHead
                                           : AttemptOutcome::kFailed,
            code};
  }
  switch (stop) {
    case StreamStop::kTtftTimeout:
      return {AttemptOutcome::kAbandoned, "ttft_timeout"};
    case StreamStop::kTotalTimeout:
      return {AttemptOutcome::kAbandoned, "total_timeout"};
    case StreamStop::kBroken:
      if (!stream.saw_done()) {
        return {AttemptOutcome::kFailed, "stream_broken"};
      }
      break;
    case StreamStop::kEnded:
      break;
  }
  return {AttemptOutcome::kCompleted, ""};
}

Seconds ParseRetryAfter(std::string_view value) {
  while (!value.empty() && value.front() == ' ') {
    value.remove_prefix(1);
  }
  while (!value.empty() && value.back() == ' ') {
    value.remove_suffix(1);
  }
  double seconds = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(seconds) ||
      seconds < 0) {
    return 0;
  }
  return seconds;
}

Seconds ParseTtftForecast(std::string_view value) {
  double seconds = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() ||
      !std::isfinite(seconds) || seconds < 0) {
    return kNever;
  }
  return seconds;
}

std::optional<std::int32_t> ParsePriorityClass(std::string_view value) {
  std::int32_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
    return std::nullopt;
  }
  return v;
}

bool IsRetryable(const AttemptRecord& record, bool retry_on_timeout) {
  switch (record.outcome) {
    case AttemptOutcome::kRejected: {
      // The overload contract says which refusals a retry can get past (never a 400).
      const api::ContractRow* row = api::FindContractRow(record.reason);
      return row != nullptr ? row->retryable : record.status != 400;
    }
    case AttemptOutcome::kDroppedAtQueueHead:
      return true;
    case AttemptOutcome::kAbandoned:
      return retry_on_timeout;
    default:
      return false;
  }
}

}  // namespace spillway::loadgen
