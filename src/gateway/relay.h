#pragma once
// One attempt of a request on one upstream endpoint, relayed to the client: connect, send,
// read the head; an answer (200, or any status but a refusal) is relayed at once, a stream
// chunk by chunk as it arrives (the next upstream read waits for the client's write: a slow
// client slows the upstream read, never buffers without bound); a refusal (429, 503) is
// returned unrelayed so the caller can retry it elsewhere or pass it on.
//
// Cancellation goes through: a watcher on the client's socket closes the upstream connection
// the moment the client leaves, streaming or not, so the engine sees the disconnect at its
// next iteration. The gateway's deadline closes the upstream too and answers 504 (or, once a
// stream has started, ends it with an SSE error event). Idle keep-alive connections to the
// endpoint are reused (ConnectionCache). Boost.Beast stays in relay.cc.
//
// The hot path is kept to nginx's system calls: the request is sent without waiting when the
// socket takes it (the usual case), and the deadlines of all attempts are kept by their
// registry on one lazily re-armed timer (a timer per upstream operation, as Beast's
// tcp_stream keeps them, cost a timerfd_settime system call or two a request).

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <string>

#include "gateway/endpoint_pool.h"
#include "gateway/relay_registry.h"
#include "net/clock.h"
#include "net/http_connection.h"
#include "routing/result_cache.h"

namespace spillway::gateway {

/// The largest answer the gateway reads whole before relaying it (a non-streaming completion,
/// an error body): 64 MiB. An SSE stream is relayed as it comes, without a limit.
inline constexpr std::uint64_t kMaxRelayedAnswerBytes = std::uint64_t{64} << 20;

/// A 200 answer as relayed to the client, kept for the exact-result cache.
struct RelayCapture {
  std::size_t limit = 0;  ///< a longer answer is not kept (complete stays false)
  routing::CachedAnswer answer;
  bool complete = false;  ///< the whole answer is in `answer` (a stream: to its end)
};

/// What the client asked, as the gateway forwards it.
struct RelayRequest {
  std::string path;  ///< "/v1/completions" or "/v1/chat/completions"
  const std::string* body = nullptr;
  net::Headers headers;  ///< end-to-end request headers passed on (Authorization, ...)
  /// Headers the gateway adds to the answer the client gets (X-Spillway-Served-Model, ...), in
  /// place of any the endpoint sent under the same names.
  net::Headers reply_headers;
  Seconds deadline_s = 0;  ///< the gateway's request deadline, on the SteadyClock
  Seconds connect_timeout_s = 0.5;
  /// Where the attempt registers: required, it keeps the deadline.
  RelayRegistry* registry = nullptr;
  /// Where to keep the 200 answer as relayed (each attempt starts it afresh); null: nowhere.
  RelayCapture* capture = nullptr;
  /// Read the token usage a 200 answer reports (AttemptResult::usage_tokens).
  bool want_usage = false;
};

struct AttemptResult {
  enum class End : std::uint8_t {
    kRelayed,      ///< the upstream's answer reached the client (status says which)
    kRefused,      ///< 429 or 503 from the upstream, nothing sent to the client yet
    kUnreachable,  ///< connect, write or head read failed: nothing sent to the client yet
    kBroken,       ///< the upstream failed after the client got bytes (stream ended with
                   ///< an error event)
    kDeadline,     ///< the gateway's deadline passed (504 or an SSE error event sent)
    kClientGone,   ///< the client left; the upstream connection was closed
    kDraining,     ///< the gateway's drain ran out of time (an SSE error event sent, if
                   ///< streaming; else nothing yet: the caller answers 503 draining)
    kTooLarge,     ///< a whole answer over kMaxRelayedAnswerBytes: nothing sent to the client
                   ///< yet (the caller answers 502 upstream_answer_too_large)
  };
  End end = End::kUnreachable;
  unsigned status = 0;    ///< the upstream's status, when it answered
  bool streamed = false;  ///< the answer was an SSE stream
  std::string error;      ///< transport error text (kUnreachable, kBroken)
  /// A refusal's body and its contract headers (Retry-After, X-Overload-Reason, ...), to pass
  /// on when no retry is made.
  std::string body;
  net::Headers headers;
  std::string overload_reason;  ///< X-Overload-Reason of a refusal, if any
  /// A relayed stream that ended with an SSE error event (e.g. a drop at the queue head after
  /// a 200 head): its error code ("stream_error" when it names none); empty otherwise.
  std::string stream_error;
  /// The tokens a 200 answer's usage reported (want_usage; a stream only with include_usage).
  std::optional<std::int64_t> usage_tokens;
  /// The endpoint's answer said X-Degraded (its own max_tokens clamp, say).
  bool degraded = false;
};

/// Called once with the time from send to the first bytes of a 200 stream (its TTFT at the
/// gateway; a non-streaming answer arrives whole at the end and says nothing of TTFT).
using FirstBytes = std::function<void(Seconds)>;
/// Called once with the endpoint's status when it answered other than 200, after its answer
/// was read and before any of it reaches the client: what the gateway believed of the attempt
/// (the prompt's blocks in the prefix index) is corrected before the client can send its next
/// request.
using NotServed = std::function<void(unsigned)>;

boost::asio::awaitable<AttemptResult> RelayAttempt(net::HttpConnection& conn,
                                                   const Upstream& upstream,
                                                   const RelayRequest& request,
                                                   const net::SteadyClock& clock,
                                                   const FirstBytes& on_first_bytes,
                                                   const NotServed& on_not_served);

}  // namespace spillway::gateway
