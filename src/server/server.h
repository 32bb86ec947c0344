#pragma once
// `spillway serve`: wires the HTTP listener, the API handler and the engine service onto one
// io_context with a thread per core, and drains gracefully on SIGTERM/SIGINT: /ready fails at
// once, new requests get 503 draining, in-flight requests get up to drain_timeout_s, then the
// process exits 0.

#include <functional>
#include <memory>

#include "config/server_config.h"

namespace spillway::server {

struct ResolvedEngine;  // profile, budgets and admission derived from the config

class Server {
 public:
  /// Resolves the profile and budgets; throws config::ConfigError on a bad profile.
  explicit Server(ServerConfig config);
  ~Server();

  /// Called once listening, with the bound port (tests use port 0).
  void OnListening(std::function<void(std::uint16_t)> callback);

  /// Runs until drained after a signal (or Shutdown()); returns the process exit code.
  int Run();

  /// Starts the drain as SIGTERM would (thread-safe).
  void Shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spillway::server
