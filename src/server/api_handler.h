#pragma once
// Routes and answers the HTTP API: POST /v1/completions and /v1/chat/completions (streaming
// SSE and not), GET /v1/models, /health, /ready and /metrics.
//
// The overload contract, the same in every reply: 429 when shed by policy, with Retry-After
// (whole seconds) and X-Overload-Reason (plus X-RateLimit-Reset for the token bucket); 503 for
// hard limits and draining; 504 when the server's own deadline passes; an OpenAI-style error
// body always. Rejections are decided before any engine work, and those that need only the
// request's head (Head: the API key, the priority header, draining, the tenant's token bucket)
// before its body is read or parsed, as nginx's limit_req decides.

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <mutex>
#include <optional>

#include "admission/admission.h"
#include "api/tokenizer.h"
#include "config/server_config.h"
#include "net/clock.h"
#include "net/http_connection.h"
#include "net/http_server.h"
#include "server/engine_service.h"
#include "server/generation_end.h"
#include "server/server_metrics.h"

namespace spillway::server {

class ApiHandler {
 public:
  /// All references must outlive the handler. `draining` is set by the signal handler. The
  /// tenants' token buckets (from config.api_keys) are the handler's: the engine's admission
  /// must not have them too.
  ApiHandler(const ServerConfig& config, std::int32_t max_model_len, EngineService& engine,
             ServerMetrics& metrics, const api::Tokenizer& tokenizer, const net::SteadyClock& clock,
             const std::atomic<bool>& draining);

  /// The refusals a completion request's head decides (net::HttpServer::HeadHandler), in this
  /// order: 401 invalid_api_key, 411 length_required (neither Content-Length nor chunked),
  /// 400 invalid_priority (X-Priority-Class), 503 draining, 429 rate_limited (the key's
  /// tenant's token bucket, which this spends); nullopt for any other request, which then
  /// reaches operator(). Thread-safe.
  std::optional<net::EarlyReply> Head(const net::Request& head);

  asio::awaitable<void> operator()(net::HttpConnection& conn);

  /// Fault injection (serve --fault-metrics-stall-on-sigusr1): while `*stalled`, GET /metrics
  /// is not answered (it waits, up to 60 s, as a hung exporter does), so scrapers time out.
  void set_metrics_stall(const std::atomic<bool>* stalled) { metrics_stalled_ = stalled; }

 private:
  struct Caller;
  /// The API key the request names (Authorization: Bearer KEY, scheme case-insensitive):
  /// nullptr when keys are configured and it names none of them; a shared default key when no
  /// keys are configured.
  const ApiKey* Authenticate(const net::Request& request) const;
  /// A refusal made from the head: counted, as Send counts replies.
  net::EarlyReply Early(const api::ApiError& error, net::Headers headers = {});
  asio::awaitable<void> Completions(net::HttpConnection& conn, bool chat);
  asio::awaitable<void> Generate(net::HttpConnection& conn, const struct Generation& g);
  /// The numbers generation-end messages quote (generation_end.h).
  GenerationLimits Limits() const;
  asio::awaitable<void> Stream(net::HttpConnection& conn, const struct Generation& g);
  asio::awaitable<void> Send(net::HttpConnection& conn, unsigned status, std::string&& body,
                             const net::Headers& headers = {},
                             std::string_view content_type = "application/json");
  asio::awaitable<void> SendError(net::HttpConnection& conn, const api::ApiError& error,
                                  const net::Headers& headers = {});

  const ServerConfig& config_;
  std::int32_t max_model_len_;
  EngineService& engine_;
  ServerMetrics& metrics_;
  const api::Tokenizer& tokenizer_;
  const net::SteadyClock& clock_;
  const std::atomic<bool>& draining_;
  const std::atomic<bool>* metrics_stalled_ = nullptr;
  /// The last overload refusal the door rendered (rate_limited or draining): its body depends
  /// only on the reason and the rounded Retry-After its headers carry, so while those are the
  /// same (a retry storm) the body is reused instead of rendered again. Under door_mu_.
  struct DoorRefusal {
    OverloadReason reason = OverloadReason::kNone;
    net::Headers headers;
    std::string body;
  };
  std::mutex door_mu_;
  AdmissionController door_;  ///< the tenants' token buckets alone, under door_mu_
  DoorRefusal last_refusal_;
  std::atomic<std::uint64_t> next_response_id_{1};
};

}  // namespace spillway::server
