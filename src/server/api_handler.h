#pragma once
// Routes and answers the HTTP API: POST /v1/completions and /v1/chat/completions (streaming
// SSE and not), GET /v1/models, /health, /ready and /metrics.
//
// The overload contract, the same in every reply: 429 when shed by policy, with Retry-After
// (whole seconds) and X-Overload-Reason (plus X-RateLimit-Reset for the token bucket); 503 for
// hard limits and draining; 504 when the server's own deadline passes; an OpenAI-style error
// body always. Rejections are decided before any engine work.

#include <atomic>
#include <boost/asio/awaitable.hpp>

#include "api/tokenizer.h"
#include "config/server_config.h"
#include "net/clock.h"
#include "net/http_connection.h"
#include "server/engine_service.h"
#include "server/generation_end.h"
#include "server/server_metrics.h"

namespace spillway::server {

class ApiHandler {
 public:
  /// All references must outlive the handler. `draining` is set by the signal handler.
  ApiHandler(const ServerConfig& config, std::int32_t max_model_len, EngineService& engine,
             ServerMetrics& metrics, const api::Tokenizer& tokenizer, const net::SteadyClock& clock,
             const std::atomic<bool>& draining);

  asio::awaitable<void> operator()(net::HttpConnection& conn);

  /// Fault injection (serve --fault-metrics-stall-on-sigusr1): while `*stalled`, GET /metrics
  /// is not answered (it waits, up to 60 s, as a hung exporter does), so scrapers time out.
  void set_metrics_stall(const std::atomic<bool>* stalled) { metrics_stalled_ = stalled; }

 private:
  struct Caller;
  /// The API key the request names (Authorization: Bearer KEY, scheme case-insensitive):
  /// nullptr when keys are configured and it names none of them; a shared default key when no
  /// keys are configured.
  const ApiKey* Authenticate(const net::HttpConnection& conn) const;
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
  std::atomic<std::uint64_t> next_response_id_{1};
};

}  // namespace spillway::server
