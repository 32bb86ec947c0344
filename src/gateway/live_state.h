#pragma once
// What the live gateway runs on: its config and its pools, swapped whole by a config reload
// (SIGHUP). A request takes the state once, at its arrival, and keeps it to its end, so a
// reload never changes the settings or the pool of a request in progress (and a pool removed
// by a reload lives until its last request ends). Thread-safe.

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "gateway/endpoint_pool.h"
#include "gateway/gateway_config.h"

namespace spillway::gateway {

struct GatewayState {
  std::shared_ptr<const GatewayConfig> config;
  std::vector<std::shared_ptr<EndpointPool>> pools;  ///< one per model, in the config's order
};

class LiveState {
 public:
  /// The current state (never null once Set was called).
  std::shared_ptr<const GatewayState> Get() const {
    const std::lock_guard lock(mu_);
    return state_;
  }
  void Set(std::shared_ptr<const GatewayState> state) {
    const std::lock_guard lock(mu_);
    state_ = std::move(state);
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const GatewayState> state_;
};

}  // namespace spillway::gateway
