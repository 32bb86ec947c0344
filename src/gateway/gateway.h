#pragma once
// `spillway gateway`: the first stage of two-stage admission, live. Wires the listener, the
// GatewayHandler, one EndpointPool per model and each endpoint's scrape and probe loops onto
// one io_context with a thread per core. At start it resolves every endpoint and, for pools
// without a model name, asks the endpoints' GET /v1/models which model they serve. Drains
// on SIGTERM/SIGINT: /ready fails at once, new requests get 503 draining, in-flight requests
// get up to drain_timeout_s, then the process exits 0. Reloads its config on SIGHUP (when
// given a way to read it again): pools and endpoints added and removed without dropping a
// request in flight (a removed endpoint drains), every other setting for the requests that
// arrive after it, the listener's keys only at a restart.

#include <cstdint>
#include <functional>
#include <memory>

#include "gateway/gateway_config.h"

namespace spillway::gateway {

class Gateway {
 public:
  /// Validates the config; throws config::ConfigError when it is unusable. `reload`, when
  /// given, reads the config again at each SIGHUP (merged and validated as at start; it throws
  /// config::ConfigError for a config that cannot be used, and the gateway keeps the one it
  /// runs on). It runs on a thread of its own.
  explicit Gateway(GatewayConfig config, std::function<GatewayConfig()> reload = {});
  ~Gateway();

  /// Called once listening, with the bound port (tests use port 0).
  void OnListening(std::function<void(std::uint16_t)> callback);

  /// Resolves and discovers the endpoints (throws std::runtime_error naming the endpoint that
  /// cannot be resolved or asked), then runs until drained after a signal; returns the exit
  /// code.
  int Run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spillway::gateway
