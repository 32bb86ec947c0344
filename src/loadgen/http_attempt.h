#pragma once
// One streaming attempt over HTTP: connect (a connection per request, TCP_NODELAY), POST the
// completion, read the head, and read the SSE stream until [DONE], an error event, the end of
// the response, or the client's timeout, which closes the socket (a real disconnect the
// server can notice). Returns what happened as an AttemptRecord, classified (classify.h).
// Boost.Beast stays in http_attempt.cc.

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <string>

#include "core/types.h"
#include "net/clock.h"
#include "net/http_get.h"
#include "net/target.h"
#include "report/attempt_record.h"

namespace spillway::loadgen {

/// What every attempt of a run shares; must outlive the attempts.
struct AttemptContext {
  const net::Endpoints* endpoints = nullptr;
  const net::Target* target = nullptr;
  const net::SteadyClock* clock = nullptr;  ///< the run's clock: seconds from its start
  std::string path;                         ///< e.g. "/v1/completions" (after base_path)
  std::string authorization;                ///< "Bearer KEY" or empty: GET requests only
  Seconds ttft_timeout_s = kNever;          ///< scenario client: no first token by then
  Seconds total_timeout_s = kNever;         ///< scenario client: not finished by then
  Seconds max_request_s = kNever;           ///< the generator's own cap, reason
                                            ///< "max_request_time" (abandoned)
  std::function<void(Seconds)> on_gap;      ///< inter-token gaps, s, as they arrive
};

/// Runs one attempt. `record` carries the request, attempt, scheduled_s, token counts, class
/// and priority_requested (sent as X-Priority-Class when set) in; the result adds sent_s
/// (now), head_s, first_token_s, finished_s, status, reason, retry_after_s, output_tokens,
/// priority_class (the reply's X-Priority-Class) and the outcome. `body` is the JSON request
/// body, `authorization` the Authorization header ("Bearer KEY"; empty: none).
boost::asio::awaitable<AttemptRecord> RunAttempt(const AttemptContext& context,
                                                 const AttemptRecord& record,
                                                 const std::string& body,
                                                 const std::string& authorization);

}  // namespace spillway::loadgen
