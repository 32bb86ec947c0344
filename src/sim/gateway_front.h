#pragma once
// The gateway in front of the simulator's replicas (SimOptions::gateway): the routing core
// (routing/router.h), its view of each replica (routing::EndpointState) and the ledger of every
// request it received. The simulator calls it at each event; no clock, no I/O.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/engine_config.h"
#include "routing/router.h"

namespace spillway {

struct SimGateway;

class GatewayFront {
 public:
  /// One EndpointState per replica, starting from the engine's own estimator priors.
  GatewayFront(const SimGateway& config, const EngineConfig& engine, std::int32_t replicas);

  struct Routed {
    routing::RouteDecision route;
    bool alone = false;  ///< sent with nothing predicted ahead: its TTFT measures prefill
  };
  /// Routes a request that passed the door; a forward is recorded as sent at `now`, a refusal
  /// as shed.
  Routed Route(std::int32_t prompt_tokens, std::int32_t priority, Seconds now);

  enum class Ending : std::uint8_t { kCompleted, kFailed, kCancelled };
  /// A forwarded request ended at `replica` (kFailed also for the replica's own refusal).
  void OnEnded(std::uint32_t replica, Seconds now, Ending ending);
  void OnFirstToken(std::uint32_t replica, std::int32_t prompt_tokens, Seconds ttft_s, bool alone) {
    pool_[replica].OnFirstToken(prompt_tokens, ttft_s, alone);
  }
  /// Every replica's metrics as of `now` (engines[i] is replica i).
  void Scrape(const std::vector<std::unique_ptr<Engine>>& engines, Seconds now);

  /// Empty when the ledger balances (and, with `at_end`, nothing is in flight), else what is
  /// wrong.
  std::string LedgerError(bool at_end) const;
  Seconds scrape_interval_s() const { return scrape_interval_s_; }

 private:
  routing::Router router_;
  std::vector<routing::EndpointState> pool_;
  routing::RouteLedger ledger_;
  Seconds scrape_interval_s_;
};

}  // namespace spillway
