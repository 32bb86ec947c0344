#include "gateway/gateway.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <iostream>
#include <map>

#include "api/overload_contract.h"
#include "api/responses.h"
#include "gateway/endpoint_watch.h"
#include "gateway/gateway_handler.h"
#include "net/http_get.h"
#include "net/http_server.h"
#include "net/io_threads.h"
#include "server/listener_replies.h"

namespace spillway::gateway {
namespace {

namespace asio = boost::asio;

/// Seconds allowed for an endpoint's GET /v1/models at start-up.
constexpr Seconds kDiscoveryTimeoutS = 5;

Upstream Resolved(asio::io_context& ioc, const UpstreamConfig& u) {
  Upstream up;
  up.url = u.url;
  up.kind = u.kind;
  try {
    up.target = net::ParseTarget(u.url);
    up.addresses = net::Resolve(ioc, up.target);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("endpoint '{}': {}", u.url, e.what()));
  }
  return up;
}

/// `up`'s answer to GET /v1/models (blocking, at start-up).
net::GetResult GetModels(const Upstream& up, Seconds timeout_s) {
  asio::io_context ioc;
  net::GetResult r;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        r = co_await net::HttpGet(up.addresses, up.target, "/v1/models", "", timeout_s);
      },
      asio::detached);
  ioc.run();
  return r;
}

/// Says so on stderr when `up` answers GET /v1/models without `model` (best effort: an
/// endpoint that is down or wants a key is not checked).
void CheckModel(const Upstream& up, const std::string& model) {
  const net::GetResult r = GetModels(up, 2.0);
  const std::vector<std::string> ids =
      r.status == 200 ? api::ModelIds(r.body) : std::vector<std::string>{};
  if (!ids.empty() && std::find(ids.begin(), ids.end(), model) == ids.end()) {
    std::cerr << fmt::format(
        "spillway gateway: warning: endpoint '{}' serves {}, not '{}': requests for '{}' "
        "will get its 404\n",
        up.url, fmt::join(ids, ", "), model, model);
  }
}

/// The model `up` serves: the first id of its GET /v1/models.
std::string DiscoverModel(const Upstream& up) {
  const net::GetResult r = GetModels(up, kDiscoveryTimeoutS);
  const std::optional<std::string> id = r.status == 200 ? api::FirstModelId(r.body) : std::nullopt;
  if (!id.has_value()) {
    throw std::runtime_error(fmt::format(
        "endpoint '{}': GET /v1/models {}; start it first, or name its model in the config "
        "(pools: [{{model: NAME, endpoints: [...]}}]) or with --model",
        up.url,
        r.status == 0 ? "failed: " + r.error : fmt::format("gave no model (status {})", r.status)));
  }
  return *id;
}

}  // namespace

struct Gateway::Impl {
  GatewayConfig config;
  asio::io_context ioc;
  net::SteadyClock clock;
  GatewayMetrics metrics;
  std::atomic<bool> draining{false};
  std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<EndpointPool>> pools;
  std::unique_ptr<GatewayHandler> handler;
  std::unique_ptr<net::HttpServer> http;
  std::function<void(std::uint16_t)> on_listening;

  explicit Impl(GatewayConfig c) : config(std::move(c)) {}

  /// One pool per model: named pools as given, the endpoints of unnamed ones by the model
  /// they report.
  void BuildPools() {
    std::map<std::string, std::vector<Upstream>> by_model;
    std::vector<std::string> order;
    for (const PoolConfig& p : config.pools) {
      for (const UpstreamConfig& u : p.endpoints) {
        Upstream up = Resolved(ioc, u);
        const std::string model = p.model.empty() ? DiscoverModel(up) : p.model;
        if (!p.model.empty()) {
          CheckModel(up, p.model);
        }
        if (by_model.count(model) == 0) {
          order.push_back(model);
        }
        by_model[model].push_back(std::move(up));
      }
    }
    for (const std::string& model : order) {
      pools.push_back(std::make_unique<EndpointPool>(model, std::move(by_model[model]), config));
    }
  }

  void BeginDrain() {
    if (draining.exchange(true)) {
      return;
    }
    metrics.draining->Set(1);
    for (const auto& pool : pools) {
      pool->DrainWaiting(clock.Now());  // never sent: 503 draining now, so they go elsewhere
    }
    std::cerr << "spillway gateway: draining (in flight: " << handler->in_flight() << ")\n";
    asio::co_spawn(ioc, WaitDrained(), asio::detached);
  }

  asio::awaitable<void> WaitDrained() {
    asio::steady_timer timer(ioc);
    const Seconds give_up = clock.Now() + config.drain_timeout_s;
    while (handler->in_flight() > 0 && clock.Now() < give_up) {
      timer.expires_after(std::chrono::milliseconds(20));
      co_await timer.async_wait(asio::use_awaitable);
    }
    if (handler->in_flight() > 0) {
      std::cerr << "spillway gateway: drain timeout with " << handler->in_flight()
                << " requests in flight; answering them 503 draining\n";
      handler->EndAllAttempts();
      for (int i = 0; i < 50 && handler->in_flight() > 0; ++i) {
        timer.expires_after(std::chrono::milliseconds(20));
        co_await timer.async_wait(asio::use_awaitable);
      }
    }
    timer.expires_after(std::chrono::milliseconds(100));
    co_await timer.async_wait(asio::use_awaitable);
    stop = true;
    http->StopAccepting();
    ioc.stop();
  }
};

Gateway::Gateway(GatewayConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {
  ValidateGatewayConfig(impl_->config, "gateway config");
}
Gateway::~Gateway() = default;

void Gateway::OnListening(std::function<void(std::uint16_t)> callback) {
  impl_->on_listening = std::move(callback);
}

int Gateway::Run() {
  Impl& m = *impl_;
  m.BuildPools();
  m.handler = std::make_unique<GatewayHandler>(m.config, m.pools, m.metrics, m.clock, m.draining);
  net::HttpServerOptions http;
  http.host = m.config.host;
  http.port = m.config.port;
  http.max_body_bytes = m.config.max_body_bytes;
  http.max_connections = m.config.max_connections;
  http.on_connection_reply = [&metrics = m.metrics](unsigned status) {
    metrics.requests_total->With({"", std::to_string(status), "connection", "gateway"}).Inc();
  };
  GatewayHandler* handler = m.handler.get();
  m.http = std::make_unique<net::HttpServer>(
      m.ioc, server::WithApiListenerReplies(http),
      [handler](net::HttpConnection& conn) { return (*handler)(conn); });
  m.http->Start();
  const WatchContext watch{&m.config, &m.metrics, &m.clock, &m.stop};
  for (const auto& pool : m.pools) {
    for (std::size_t i = 0; i < pool->size(); ++i) {
      // Each loop on a strand of its own: its HTTP client's timer and socket handlers must not
      // run on two I/O threads at once (Beast's streams are not thread-safe).
      asio::co_spawn(asio::make_strand(m.ioc), ScrapeLoop(*pool, i, watch), asio::detached);
      asio::co_spawn(asio::make_strand(m.ioc), ProbeLoop(*pool, i, watch), asio::detached);
    }
  }
  asio::signal_set signals(m.ioc, SIGTERM, SIGINT);
  signals.async_wait([&m](const boost::system::error_code& ec, int) {
    if (!ec) {
      m.BeginDrain();
    }
  });
  std::string pools;
  for (const auto& p : m.pools) {
    pools += fmt::format("{}'{}' ({} endpoints)", pools.empty() ? "" : ", ", p->model(), p->size());
  }
  std::cerr << fmt::format(
      "spillway gateway: listening on http://{}:{} (router {}, staleness {}, TTFT SLO {:g} s, "
      "pools: {})\n",
      m.config.host, m.http->port(), routing::ToString(m.config.router.policy),
      routing::ToString(m.config.router.staleness), m.config.router.ttft_slo_s, pools);
  if (m.on_listening) {
    m.on_listening(m.http->port());
  }
  net::RunOnThreads(m.ioc, m.config.threads);
  std::cerr << "spillway gateway: stopped\n";
  return 0;
}

}  // namespace spillway::gateway
