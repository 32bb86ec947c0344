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
#include <condition_variable>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "api/overload_contract.h"
#include "api/responses.h"
#include "gateway/endpoint_watch.h"
#include "gateway/gateway_handler.h"
#include "gateway/live_state.h"
#include "net/http_get.h"
#include "net/http_server.h"
#include "net/io_threads.h"
#include "net/open_files.h"
#include "server/listener_replies.h"

namespace spillway::gateway {
namespace {

namespace asio = boost::asio;

/// Seconds allowed for an endpoint's GET /v1/models at start-up.
constexpr Seconds kDiscoveryTimeoutS = 5;

/// Says, for each endpoint of `pool` without metrics whose batch the config does not give, what the
/// gateway router assumes of it: its batch is never measured (docs/gateway.md, "An endpoint
/// without metrics").
void WarnOfAssumedBatches(const EndpointPool& pool, const GatewayConfig& config) {
  if (config.router.policy != routing::RouterPolicy::kGateway) {
    return;
  }
  for (std::size_t i = 0; i < pool.size(); ++i) {
    const std::shared_ptr<const Upstream> up = pool.upstream(i);
    if (up->kind == routing::EngineKind::kOpenai && !up->max_running_given) {
      std::cerr << fmt::format(
          "spillway gateway: note: endpoint {} has no metrics; admission assumes it runs {} "
          "requests at once (set max_running for it in a --config file: docs/gateway.md, "
          "\"An endpoint without metrics\")\n",
          up->url, up->priors.max_running);
    }
  }
}

Upstream Resolved(asio::io_context& ioc, const UpstreamConfig& u) {
  Upstream up;
  up.url = u.url;
  up.kind = u.kind;
  up.priors = u.priors;
  up.max_running_given = u.max_running_given;
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
  return net::HttpGetNow(up.addresses, up.target, "/v1/models", timeout_s);
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

/// Every endpoint of `config`, resolved, by model in the config's order. An endpoint of a pool
/// without a model name serves the model `known` says it serves (an endpoint already in a pool,
/// by net::Target::Key), else the one its GET /v1/models reports. Throws std::runtime_error naming
/// the endpoint that cannot be resolved or asked.
std::vector<std::pair<std::string, std::vector<Upstream>>> WantedPools(
    const GatewayConfig& config, const std::map<std::string, std::string>& known) {
  asio::io_context ioc;
  std::vector<std::pair<std::string, std::vector<Upstream>>> out;
  for (const PoolConfig& p : config.pools) {
    for (const UpstreamConfig& u : p.endpoints) {
      Upstream up = Resolved(ioc, u);
      std::string model = p.model;
      if (model.empty()) {
        const auto it = known.find(up.target.Key());
        model = it != known.end() ? it->second : DiscoverModel(up);
      } else if (known.count(up.target.Key()) == 0) {
        CheckModel(up, p.model);
      }
      auto at =
          std::find_if(out.begin(), out.end(), [&](const auto& m) { return m.first == model; });
      if (at == out.end()) {
        at = out.insert(out.end(), {model, {}});
      }
      at->second.push_back(std::move(up));
    }
  }
  return out;
}

/// Says so on stderr when a reload changes a listener key (it needs a restart), and keeps the
/// running value in `next`.
void KeepListener(const GatewayConfig& running, GatewayConfig* next) {
  std::vector<std::string> changed;
  auto keep = [&](auto GatewayConfig::*field, const char* key) {
    if (next->*field != running.*field) {
      changed.emplace_back(key);
      next->*field = running.*field;
    }
  };
  keep(&GatewayConfig::host, "listen.host");
  keep(&GatewayConfig::port, "listen.port");
  keep(&GatewayConfig::threads, "listen.threads");
  keep(&GatewayConfig::max_connections, "listen.max_connections");
  keep(&GatewayConfig::max_body_bytes, "listen.max_body_bytes");
  keep(&GatewayConfig::rate_limit, "rate_limit");
  if (!changed.empty()) {
    std::cerr << fmt::format(
        "spillway gateway: reload: {} changed: takes a restart; kept the running value\n",
        fmt::join(changed, ", "));
  }
}

}  // namespace

struct Gateway::Impl {
  GatewayConfig config;  // as started; the running config is state's
  std::function<GatewayConfig()> reload_config;
  asio::io_context ioc;
  net::SteadyClock clock;
  GatewayMetrics metrics;
  std::atomic<bool> draining{false};
  std::atomic<bool> stop{false};
  LiveState state;
  std::unique_ptr<GatewayHandler> handler;
  std::unique_ptr<net::HttpServer> http;
  std::function<void(std::uint16_t)> on_listening;
  // Reloads run one at a time on a thread of their own (discovery blocks), asked by SIGHUP.
  std::thread reloader;
  std::mutex reload_mu;
  std::condition_variable reload_cv;
  bool reload_pending = false;  // guarded by reload_mu
  bool reloader_stop = false;   // guarded by reload_mu

  explicit Impl(GatewayConfig c)
      : config(std::move(c)), ioc(net::ConcurrencyHint(config.threads)) {}

  WatchContext Watch() { return {&state, &metrics, &clock, &stop}; }

  /// Starts the scrape and probe loops of `pool`'s endpoint `i` at `generation`.
  void StartWatching(const std::shared_ptr<EndpointPool>& pool, std::size_t i,
                     std::uint64_t generation) {
    // Each loop on a strand of its own: its HTTP client's timer and socket handlers must not
    // run on two I/O threads at once (Beast's streams are not thread-safe).
    asio::co_spawn(asio::make_strand(ioc), ScrapeLoop(pool, i, generation, Watch()),
                   asio::detached);
    asio::co_spawn(asio::make_strand(ioc), ProbeLoop(pool, i, generation, Watch()), asio::detached);
  }

  /// The first state: one pool per model, every endpoint watched.
  void Start() {
    auto cfg = std::make_shared<const GatewayConfig>(config);
    auto first = std::make_shared<GatewayState>();
    first->config = cfg;
    for (auto& [model, upstreams] : WantedPools(*cfg, {})) {
      first->pools.push_back(std::make_shared<EndpointPool>(model, std::move(upstreams), *cfg));
    }
    state.Set(first);
  }

  void WatchAll() {
    for (const auto& pool : state.Get()->pools) {
      for (std::size_t i = 0; i < pool->size(); ++i) {
        StartWatching(pool, i, pool->generation(i));
      }
    }
  }

  /// SIGHUP: reads the config again (reload_config) and applies it to the running gateway:
  /// pools and endpoints added and removed (removed ones drain), every other setting for the
  /// requests that arrive from now on; the listener's keys need a restart. A config that does
  /// not load, validate or resolve changes nothing (logged; config_reloads_total{result=
  /// "error"}).
  void Reload() {
    const std::shared_ptr<const GatewayState> before = state.Get();
    std::map<std::string, std::string> known;  // Target::Key -> model, of those in a pool
    for (const auto& pool : before->pools) {
      for (std::size_t i = 0; i < pool->size(); ++i) {
        if (pool->Watched(i, pool->generation(i))) {
          known[pool->upstream(i)->target.Key()] = pool->model();
        }
      }
    }
    GatewayConfig loaded;
    std::vector<std::pair<std::string, std::vector<Upstream>>> wanted;
    try {
      loaded = reload_config();
      KeepListener(*before->config, &loaded);
      wanted = WantedPools(loaded, known);
    } catch (const std::exception& e) {
      std::cerr << "spillway gateway: reload failed, still running on the config before: "
                << e.what() << "\n";
      metrics.config_reloads_total->With({"error"}).Inc();
      metrics.config_last_reload_successful->Set(0);
      return;
    }
    auto cfg = std::make_shared<const GatewayConfig>(std::move(loaded));
    auto next = std::make_shared<GatewayState>();
    next->config = cfg;
    const Seconds now = clock.Now();
    std::string summary;
    for (auto& [model, upstreams] : wanted) {
      const auto it = std::find_if(before->pools.begin(), before->pools.end(),
                                   [&](const auto& p) { return p->model() == model; });
      std::shared_ptr<EndpointPool> pool;
      EndpointPool::Changes changes;
      if (it != before->pools.end()) {
        pool = *it;
        changes = pool->Update(std::move(upstreams), *cfg, now);
      } else {
        pool = std::make_shared<EndpointPool>(model, std::move(upstreams), *cfg);
        for (std::size_t i = 0; i < pool->size(); ++i) {
          changes.started.push_back({i, pool->generation(i)});
        }
        changes.added = pool->size();
      }
      for (const EndpointPool::Started& s : changes.started) {
        StartWatching(pool, s.endpoint, s.generation);
      }
      summary += fmt::format("{}'{}' ({} endpoint{}, {} added, {} removed, {} changed)",
                             summary.empty() ? "" : ", ", model, pool->active(),
                             pool->active() == 1 ? "" : "s", changes.added, changes.removed,
                             changes.changed);
      next->pools.push_back(std::move(pool));
    }
    handler->OnReload(*before->config, *cfg);
    state.Set(next);
    for (const auto& pool : before->pools) {  // models no longer served: their endpoints drain
      if (std::find(next->pools.begin(), next->pools.end(), pool) == next->pools.end()) {
        const std::size_t waiting = pool->waiting();
        pool->Retire(now);
        summary += fmt::format(", '{}' removed{}", pool->model(),
                               waiting > 0 ? fmt::format(" ({} waiting go first)", waiting) : "");
      }
    }
    if (before->config->api_keys != cfg->api_keys) {
      summary += fmt::format("; API keys changed ({} now; every tenant's bucket starts full)",
                             cfg->api_keys.size());
    }
    metrics.config_reloads_total->With({"ok"}).Inc();
    metrics.config_last_reload_successful->Set(1);
    std::cerr << fmt::format(
        "spillway gateway: reloaded (router {}, staleness {}, TTFT SLO {:g} s, pools: {})\n",
        routing::ToString(cfg->router.policy), routing::ToString(cfg->router.staleness),
        cfg->router.ttft_slo_s, summary);
  }

  void RunReloader() {
    for (;;) {
      {
        std::unique_lock lock(reload_mu);
        reload_cv.wait(lock, [&] { return reload_pending || reloader_stop; });
        if (reloader_stop) {
          return;
        }
        reload_pending = false;
      }
      Reload();
    }
  }

  void AskReload() {
    if (draining.load()) {
      std::cerr << "spillway gateway: SIGHUP while draining: no reload\n";
      return;
    }
    {
      const std::lock_guard lock(reload_mu);
      reload_pending = true;
    }
    reload_cv.notify_one();
  }

  void StopReloader() {
    {
      const std::lock_guard lock(reload_mu);
      reloader_stop = true;
    }
    reload_cv.notify_one();
    if (reloader.joinable()) {
      reloader.join();
    }
  }

  /// Waits for the next SIGHUP (again after each one).
  void WaitForHangup(asio::signal_set& hangup) {
    hangup.async_wait([this, &hangup](const boost::system::error_code& ec, int) {
      if (!ec) {
        AskReload();
        WaitForHangup(hangup);
      }
    });
  }

  void BeginDrain() {
    if (draining.exchange(true)) {
      return;
    }
    metrics.draining->Set(1);
    for (const auto& pool : state.Get()->pools) {
      pool->DrainWaiting(clock.Now());  // never sent: 503 draining now, so they go elsewhere
    }
    std::cerr << "spillway gateway: draining (in flight: " << handler->in_flight() << ")\n";
    asio::co_spawn(ioc, WaitDrained(), asio::detached);
  }

  asio::awaitable<void> WaitDrained() {
    asio::steady_timer timer(ioc);
    const Seconds give_up = clock.Now() + state.Get()->config->drain_timeout_s;
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

Gateway::Gateway(GatewayConfig config, std::function<GatewayConfig()> reload)
    : impl_(std::make_unique<Impl>(std::move(config))) {
  ValidateGatewayConfig(impl_->config, "gateway config");
  impl_->reload_config = std::move(reload);
}
Gateway::~Gateway() { impl_->StopReloader(); }

void Gateway::OnListening(std::function<void(std::uint16_t)> callback) {
  impl_->on_listening = std::move(callback);
}

int Gateway::Run() {
  Impl& m = *impl_;
  // Two descriptors a request (the client's connection and the endpoint's), and idle ones
  // kept for reuse: Debian's soft limit of 1024 would cap it far below max_connections.
  const std::int64_t open_files = net::RaiseOpenFileLimit();
  if (open_files < 2 * static_cast<std::int64_t>(m.config.max_connections)) {
    std::cerr << fmt::format(
        "spillway gateway: warning: the open-file limit ({}) is under twice listen.max_connections "
        "({}): raise it (ulimit -Hn) or lower max_connections\n",
        open_files, m.config.max_connections);
  }
  m.Start();
  m.handler = std::make_unique<GatewayHandler>(m.ioc.get_executor(), m.state, m.metrics, m.clock,
                                               m.draining);
  net::HttpServerOptions http;
  http.host = m.config.host;
  http.port = m.config.port;
  http.max_body_bytes = m.config.max_body_bytes;
  http.max_connections = m.config.max_connections;
  http.one_thread = net::IoThreadCount(m.config.threads) == 1;
  http.on_connection_reply = [&metrics = m.metrics](unsigned status) {
    metrics.requests_total->With({"", std::to_string(status), "connection", "gateway"}).Inc();
  };
  GatewayHandler* handler = m.handler.get();
  m.http = std::make_unique<net::HttpServer>(
      m.ioc, server::WithApiListenerReplies(http),
      [handler](net::HttpConnection& conn) { return (*handler)(conn); },
      [handler](const net::Request& head) { return handler->Head(head); });
  m.http->Start();
  m.WatchAll();
  asio::signal_set signals(m.ioc, SIGTERM, SIGINT);
  signals.async_wait([&m](const boost::system::error_code& ec, int) {
    if (!ec) {
      m.BeginDrain();
    }
  });
  asio::signal_set hangup(m.ioc);
  if (m.reload_config) {
    hangup.add(SIGHUP);
    m.WaitForHangup(hangup);
    m.reloader = std::thread([&m] { m.RunReloader(); });
  }
  std::string pools;
  for (const auto& p : m.state.Get()->pools) {
    pools += fmt::format("{}'{}' ({} endpoint{})", pools.empty() ? "" : ", ", p->model(), p->size(),
                         p->size() == 1 ? "" : "s");
    WarnOfAssumedBatches(*p, m.config);
  }
  const std::string fair = m.config.fair_share.min_share_ratio > 0
                               ? fmt::format(", fair shedding at {:g} of each flow's offered share",
                                             m.config.fair_share.min_share_ratio)
                               : "";
  std::cerr << fmt::format(
      "spillway gateway: listening on http://{}:{} (router {}, staleness {}, TTFT SLO {:g} s{}, "
      "pools: {})\n",
      m.config.host, m.http->port(), routing::ToString(m.config.router.policy),
      routing::ToString(m.config.router.staleness), m.config.router.ttft_slo_s, fair, pools);
  if (m.on_listening) {
    m.on_listening(m.http->port());
  }
  net::RunOnThreads(m.ioc, m.config.threads);
  m.StopReloader();
  std::cerr << "spillway gateway: stopped\n";
  return 0;
}

}  // namespace spillway::gateway
