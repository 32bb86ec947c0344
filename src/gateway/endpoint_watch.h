#pragma once
// The gateway's background work per endpoint: a scrape of /metrics every scrape interval (the
// load the Router routes on; a failed scrape leaves the last one to age into staleness) and an
// active health probe every probe interval (spillway's /ready, every other kind's /health:
// 200 ready, 503 not ready, no answer unreachable; any other status counts as alive). Hosted
// APIs without metrics (kind openai) get neither: they are known from the replies alone.
// Both loops end when `stop` is set.

#include <atomic>
#include <boost/asio/awaitable.hpp>

#include "gateway/endpoint_pool.h"
#include "gateway/gateway_config.h"
#include "gateway/gateway_metrics.h"
#include "net/clock.h"

namespace spillway::gateway {

struct WatchContext {
  const GatewayConfig* config = nullptr;
  GatewayMetrics* metrics = nullptr;
  const net::SteadyClock* clock = nullptr;
  const std::atomic<bool>* stop = nullptr;
};

boost::asio::awaitable<void> ScrapeLoop(EndpointPool& pool, std::size_t endpoint,
                                        WatchContext context);
boost::asio::awaitable<void> ProbeLoop(EndpointPool& pool, std::size_t endpoint,
                                       WatchContext context);

}  // namespace spillway::gateway
