#include "gateway/endpoint_watch.h"

#include <fmt/format.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <iostream>
#include <optional>
#include <string>

#include "metrics/prometheus_text.h"
#include "net/http_get.h"

namespace spillway::gateway {
namespace {

namespace asio = boost::asio;

/// A probe not answered within this is unreachable (longer than a scrape's timeout: a busy
/// endpoint answers a scrape late before it is down).
constexpr Seconds kProbeTimeoutS = 1.0;

asio::awaitable<void> SleepUntil(const net::SteadyClock& clock, Seconds t) {
  asio::steady_timer timer(co_await asio::this_coro::executor, clock.At(t));
  co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
}

}  // namespace

asio::awaitable<void> ScrapeLoop(std::shared_ptr<EndpointPool> pool_ptr, std::size_t i,
                                 std::uint64_t generation, WatchContext c) {
  EndpointPool& pool = *pool_ptr;
  const std::shared_ptr<const Upstream> upstream = pool.upstream(i);
  const Upstream& up = *upstream;
  if (up.kind == routing::EngineKind::kOpenai) {
    co_return;
  }
  const net::SteadyClock& clock = *c.clock;
  Seconds next = clock.Now();
  std::optional<bool> was_ok;  // logged on each change
  while (!c.stop->load() && pool.Watched(i, generation)) {
    const std::shared_ptr<const GatewayState> state = c.state->Get();
    const net::GetResult r = co_await net::HttpGet(up.addresses, up.target, "/metrics", "",
                                                   state->config->scrape_timeout_s);
    if (!pool.Watched(i, generation)) {
      break;  // removed while it was asked
    }
    const bool ok =
        r.status == 200 && pool.OnScrape(i, metrics::ParseExposition(r.body), clock.Now());
    c.metrics->scrapes_total->With({pool.model(), up.url, ok ? "ok" : "error"}).Inc();
    if (was_ok != ok) {
      const std::optional<routing::EngineKind> kind = pool.Kind(i);
      std::cerr << "spillway gateway: " << up.url << ": GET /metrics "
                << (ok              ? "answers (kind " + std::string(routing::ToString(*kind)) + ")"
                    : r.status == 0 ? "failed: " + r.error
                    : r.status != 200
                        ? "answered " + std::to_string(r.status)
                        : std::string("has no load series ") +
                              (kind.has_value() ? "of kind " + std::string(routing::ToString(*kind))
                                                : "of a known engine kind"))
                << "\n";
      was_ok = ok;
    }
    next = std::max(next + state->config->scrape_interval_s, clock.Now());
    co_await SleepUntil(clock, next);
  }
}

asio::awaitable<void> ProbeLoop(std::shared_ptr<EndpointPool> pool_ptr, std::size_t i,
                                std::uint64_t generation, WatchContext c) {
  EndpointPool& pool = *pool_ptr;
  const std::shared_ptr<const Upstream> upstream = pool.upstream(i);
  const Upstream& up = *upstream;
  if (up.kind == routing::EngineKind::kOpenai) {
    co_return;
  }
  const net::SteadyClock& clock = *c.clock;
  std::optional<routing::ProbeResult> last;  // logged on each change
  while (!c.stop->load() && pool.Watched(i, generation)) {
    // The kind may be learned at the first scrape; until then /health (every kind has it).
    const bool spillway = pool.Kind(i) == routing::EngineKind::kSpillway;
    const net::GetResult r = co_await net::HttpGet(
        up.addresses, up.target, spillway ? "/ready" : "/health", "", kProbeTimeoutS);
    const routing::ProbeResult result = routing::ProbeResultOf(r.status);
    if (!pool.Watched(i, generation)) {
      break;  // removed while it was asked
    }
    pool.OnProbe(i, result, clock.Now());
    if (last != result) {
      std::cerr << "spillway gateway: " << up.url << ": "
                << (result == routing::ProbeResult::kReady ? std::string("ready")
                    : result == routing::ProbeResult::kNotReady
                        ? fmt::format("not ready ({} from {}): no new work", r.status,
                                      spillway ? "/ready" : "/health")
                        : std::string("down (no answer): no new work"))
                << "\n";
      last = result;
    }
    co_await SleepUntil(clock, clock.Now() + c.state->Get()->config->probe_interval_s);
  }
}

}  // namespace spillway::gateway
