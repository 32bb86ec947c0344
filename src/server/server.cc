#include "server/server.h"

#include <fmt/format.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <iostream>

#include "api/responses.h"
#include "api/tokenizer.h"
#include "engine/resolve.h"
#include "net/clock.h"
#include "net/http_server.h"
#include "net/io_threads.h"
#include "server/api_handler.h"
#include "server/api_keys.h"
#include "server/engine_service.h"
#include "server/generation_end.h"
#include "server/listener_replies.h"
#include "server/server_metrics.h"

namespace spillway::server {
namespace {

/// The engine from the config's settings. Its admission has no tenants: their token buckets
/// are ApiHandler's, decided from the request's head before its body is read (as the
/// simulator keeps them at its door in front of the replicas).
EngineConfig ResolveServedEngine(const ServerConfig& c) {
  return ResolveEngine(c.engine, c.profile_dir, {});
}

}  // namespace

struct Server::Impl {
  ServerConfig config;
  EngineConfig engine_config;
  asio::io_context ioc;
  net::SteadyClock clock;
  ServerMetrics metrics;
  api::ApproxTokenizer tokenizer;
  std::atomic<bool> draining{false};
  std::atomic<bool> metrics_stalled{false};  // fault injection: SIGUSR1 toggles it
  std::unique_ptr<EngineService> engine;
  std::unique_ptr<ApiHandler> handler;
  std::unique_ptr<net::HttpServer> http;
  std::function<void(std::uint16_t)> on_listening;
  int exit_code = 0;

  explicit Impl(ServerConfig c)
      : config(std::move(c)),
        engine_config(ResolveServedEngine(config)),
        ioc(net::ConcurrencyHint(config.threads)),
        metrics(config.model) {}

  /// Each SIGUSR1 toggles the /metrics stall (fault injection).
  void WaitForStallToggles(asio::signal_set& signals) {
    signals.async_wait([this, &signals](const boost::system::error_code& ec, int) {
      if (ec) {
        return;
      }
      const bool stalled = !metrics_stalled.load();
      metrics_stalled = stalled;
      std::cerr << "spillway serve: fault injection: GET /metrics "
                << (stalled ? "stalled" : "answers again") << "\n";
      WaitForStallToggles(signals);
    });
  }

  void BeginDrain() {
    if (draining.exchange(true)) {
      return;
    }
    std::cerr << "spillway serve: draining (in flight: " << engine->in_flight() << ")\n";
    engine->StartDraining();
    asio::co_spawn(ioc, WaitDrained(), asio::detached);
  }

  asio::awaitable<void> WaitDrained() {
    asio::steady_timer timer(ioc);
    const Seconds give_up = clock.Now() + config.drain_timeout_s;
    while (engine->in_flight() > 0 && clock.Now() < give_up) {
      timer.expires_after(std::chrono::milliseconds(20));
      co_await timer.async_wait(asio::use_awaitable);
    }
    if (engine->in_flight() > 0) {
      std::cerr << "spillway serve: drain timeout with " << engine->in_flight()
                << " requests in flight; answering them 503 draining\n";
      engine->AbortAll(AbortCause::kShutdown);
      timer.expires_after(std::chrono::milliseconds(150));
      co_await timer.async_wait(asio::use_awaitable);
    }
    // Let the last responses reach their sockets before stopping.
    timer.expires_after(std::chrono::milliseconds(100));
    co_await timer.async_wait(asio::use_awaitable);
    http->StopAccepting();
    engine->Stop();
    ioc.stop();
  }
};

Server::Server(ServerConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
Server::~Server() = default;

void Server::OnListening(std::function<void(std::uint16_t)> callback) {
  impl_->on_listening = std::move(callback);
}

void Server::Shutdown() {
  asio::post(impl_->ioc, [this] { impl_->BeginDrain(); });
}

int Server::Run() {
  Impl& m = *impl_;
  m.engine = std::make_unique<EngineService>(m.ioc, m.engine_config, m.metrics, m.clock);
  m.handler = std::make_unique<ApiHandler>(m.config, m.engine_config.max_model_len, *m.engine,
                                           m.metrics, m.tokenizer, m.clock, m.draining);
  net::HttpServerOptions http;
  http.host = m.config.host;
  http.port = m.config.port;
  http.max_body_bytes = m.config.max_body_bytes;
  http.header_timeout_s = m.config.header_timeout_s;
  http.idle_timeout_s = m.config.idle_timeout_s;
  http.max_connections = m.config.max_connections;
  http.one_thread = net::IoThreadCount(m.config.threads) == 1;
  http.on_connection_reply = [&metrics = m.metrics](unsigned status) {
    metrics.http_requests_total->With({std::to_string(status)}).Inc();
  };
  ApiHandler* handler = m.handler.get();
  m.http = std::make_unique<net::HttpServer>(
      m.ioc, WithApiListenerReplies(http),
      [handler](net::HttpConnection& conn) { return (*handler)(conn); },
      [handler](const net::Request& head) { return handler->Head(head); });
  m.http->Start();
  m.engine->Start();
  asio::signal_set stall(m.ioc);
  if (m.config.fault_metrics_stall_on_sigusr1) {
    m.handler->set_metrics_stall(&m.metrics_stalled);
    stall.add(SIGUSR1);
    m.WaitForStallToggles(stall);
  }
  asio::signal_set signals(m.ioc, SIGTERM, SIGINT);
  signals.async_wait([&m](const boost::system::error_code& ec, int) {
    if (!ec) {
      m.BeginDrain();
    }
  });
  const auto& p = m.engine_config.profile;
  const std::string long_prefill = LongPrefillSummary(m.engine_config.scheduler);
  const FairShareConfig& fair = m.engine_config.admission.fair_share;
  const std::string policy =
      std::string(ToString(m.engine_config.admission.policy)) +
      (fair.min_share_ratio > 0
           ? fmt::format(" with fair shedding (min share ratio {:g})", fair.min_share_ratio)
           : std::string());
  std::cerr << fmt::format(
      "spillway serve: listening on http://{}:{} (model '{}', EMULATED executor: profile {}, "
      "policy {}, max_num_seqs {}, max_num_batched_tokens {}, {} KV blocks{})\n",
      m.config.host, m.http->port(), m.config.model, p.name, policy,
      m.engine_config.scheduler.max_num_seqs, m.engine_config.scheduler.max_num_batched_tokens,
      m.engine_config.num_gpu_blocks, long_prefill.empty() ? std::string() : ", " + long_prefill);
  // vLLM refuses to start when one sequence of max_model_len cannot fit in the KV cache; a small
  // pool is useful here (KV pressure in tests), so serve starts and says what will be refused.
  if (const std::int64_t kv_tokens = std::int64_t{m.engine_config.num_gpu_blocks} * p.block_size;
      kv_tokens < m.engine_config.max_model_len) {
    std::cerr << fmt::format(
        "spillway serve: warning: the KV cache holds {} tokens ({} blocks of {}), less than "
        "max_model_len {}: a request whose prompt and max_tokens need more is refused with 400 "
        "(lower --max-model-len to match, as vLLM requires)\n",
        kv_tokens, m.engine_config.num_gpu_blocks, p.block_size, m.engine_config.max_model_len);
  }
  if (m.on_listening) {
    m.on_listening(m.http->port());
  }
  net::RunOnThreads(m.ioc, m.config.threads);
  std::cerr << "spillway serve: stopped\n";
  return m.exit_code;
}

}  // namespace spillway::server
