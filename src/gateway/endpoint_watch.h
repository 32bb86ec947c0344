#pragma once
// The gateway's background work per endpoint: a scrape of /metrics every scrape interval (the
// load the Router routes on; a failed scrape leaves the last one to age into staleness) and an
// active health probe every probe interval (spillway's /ready, every other kind's /health:
// 200 ready, 503 not ready, no answer unreachable; any other status counts as alive). Hosted
// APIs without metrics (kind openai) get neither: they are known from the replies alone.
// Both loops end when `stop` is set or the endpoint leaves the pool (a config reload removed
// it: EndpointPool::Watched), and read the scrape and probe intervals of the current config.

#include <atomic>
#include <boost/asio/awaitable.hpp>

#include "gateway/endpoint_pool.h"
#include "gateway/gateway_config.h"
#include "gateway/gateway_metrics.h"
#include "gateway/live_state.h"
#include "net/clock.h"

namespace spillway::gateway {

struct WatchContext {
  const LiveState* state = nullptr;
  GatewayMetrics* metrics = nullptr;
  const net::SteadyClock* clock = nullptr;
  const std::atomic<bool>* stop = nullptr;
};

/// The loops of `endpoint` of `pool` at `generation` (EndpointPool::Watched).
boost::asio::awaitable<void> ScrapeLoop(std::shared_ptr<EndpointPool> pool, std::size_t endpoint,
                                        std::uint64_t generation, WatchContext context);
boost::asio::awaitable<void> ProbeLoop(std::shared_ptr<EndpointPool> pool, std::size_t endpoint,
                                       std::uint64_t generation, WatchContext context);

}  // namespace spillway::gateway
