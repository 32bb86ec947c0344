#pragma once
// How an admitted generation ends, decided from the event that ends it: one pure mapping for
// both reply sinks of the API handler (the JSON answer and the SSE stream), so a 504, a drop at
// the queue head or an engine failure reads the same whichever way the client asked. Statuses,
// error types and codes come from the overload contract (api/overload_contract.h).

#include <optional>
#include <string>

#include "api/openai_types.h"
#include "api/overload_contract.h"
#include "net/response_head.h"
#include "server/stream_event.h"

namespace spillway::server {

/// The end of a generation, as a sink delivers it.
struct GenerationEnd {
  enum class Kind : std::uint8_t {
    kFinished,    ///< a complete answer: finish_reason "stop" or "length"
    kError,       ///< an error reply (non-streaming) or SSE error event (streaming)
    kClientGone,  ///< nobody to answer
  };
  Kind kind = Kind::kFinished;
  std::string finish_reason;
  api::ApiError error;
  net::Headers headers;  ///< Retry-After and X-Overload-Reason of an error (status replies only)
  std::optional<AbortCause> abort;  ///< what the engine is told (the request may still run)
};

/// The numbers the messages quote, seconds.
struct GenerationLimits {
  double ttft_slo_s = 0;
  double request_deadline_s = 0;
  double drain_timeout_s = 0;
};

/// The headers of a 429 or 503 for `reason` (the overload contract's, shared with the gateway).
using api::ContractHeaders;

/// The end `event` (anything but a token) means; `channel_error` is a failed receive (treated
/// as the deadline, like kTimeout).
GenerationEnd EndOf(const StreamEvent& event, bool channel_error, const GenerationLimits& limits);

}  // namespace spillway::server
