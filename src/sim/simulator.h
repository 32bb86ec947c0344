#pragma once
// The discrete-event simulator: drives the real scheduler, KV manager, emulated executor,
// admission controller and the scenario's client behaviour in virtual time.
//
// Algorithm: events are ordered by (time, sequence number); arrivals come from a pre-generated
// sorted list merged with the event heap. Each replica runs one step at a time: Step(now) ->
// executor.Run(plan) -> a StepDone event at now + duration -> OnStepDone -> next Step. Clients
// time out (TTFT timeout, total timeout) and, with cancellation propagation on, abort their
// request, which the engine applies at its next step. The server's request deadline
// (timeouts.request_timeout_s, 4.5 s by default) fails a request still unanswered after it, as
// the live server's 504 does, and aborts it. Rejected clients retry per the scenario's retry
// policy. Deterministic: same scenario, policy and seed give the same
// summary. With a gateway (SimOptions::gateway), every attempt is first routed by the routing
// core over scraped endpoint state, which sheds (429 queue_delay_exceeded, 503 no_endpoint)
// before any replica sees it; the gateway's ledger (received == shed + in flight + completed +
// failed + cancelled) is checked after every event. The engine invariants are checked after steps
// (see InvariantChecks); a failure throws SimInvariantError naming the seed. Requests longer than
// the engine's max_model_len are refused at the door with 400 context_length_exceeded, as the
// server does. Throws config::ConfigError when the scenario produces no arrivals.

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/engine_config.h"
#include "report/attempt_record.h"
#include "report/run_summary.h"
#include "routing/cascade.h"
#include "routing/pool.h"
#include "routing/result_cache.h"
#include "sim/run_config.h"
#include "workload/scenario.h"

namespace spillway {

class SimInvariantError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// How often the engine invariants are checked: after every step (tests), amortized (every
/// step while the engine is small, then every k-th step so a check costs O(1) per step on
/// average; the CLI default), or never (benchmarks).
enum class InvariantChecks : std::uint8_t { kEveryStep, kAmortized, kOff };

/// The gateway in front of the replicas: the routing core (routing/router.h) the live gateway
/// runs, fed by scrapes of each replica every scrape_interval_s (so its metrics arrive late, as
/// they do live) and by the replies it relays.
struct SimGateway {
  routing::RouterConfig router;
  routing::HealthConfig health;
  routing::RetryConfig retry;
  routing::WaitQueueConfig queue;    ///< the gateway router's wait queue (routing/wait_queue.h)
  PredictionErrorConfig prediction;  ///< its margin (admission/prediction_errors.h)
  FairShareConfig fair_share;        ///< fair shedding in each pool (routing::PoolConfig)
  Seconds scrape_interval_s = 0.25;
  Seconds probe_interval_s = 0.5;  ///< /ready probes, as the live gateway's default
  /// The cascade's steps (routing/cascade.h), as the live gateway's cascade.order.
  std::vector<routing::CascadeStep> cascade_order = routing::DefaultCascadeOrder();
  /// Its exact-result cache (off unless max_entries > 0): an arrival asking a prompt asked
  /// before (Arrival::prompt_id) of the same tenant is answered from it. The simulator has no
  /// answer bytes: max_entries and ttl_s bound it, max_bytes hardly.
  routing::ResultCacheConfig cache;
};

/// One pool of replicas running one model (workload/fleet.h's FleetPool, resolved): the model
/// cascade's pools. `engine` nullopt: the run's engine config. `fallbacks`: indices of later
/// pools that take what this one refuses for load, in order; `degrade`: its max_tokens clamp in
/// the cascade's clamp step.
struct SimPool {
  std::string model;
  std::int32_t replicas = 1;
  std::optional<EngineConfig> engine;
  std::vector<std::int32_t> fallbacks;
  routing::DegradeConfig degrade = {};
};

struct SimOptions {
  std::uint64_t seed = 1;
  /// Replicas of the run's engine, when `pools` is empty (else the sum of theirs).
  std::int32_t replicas = 1;
  /// Several pools, every request asking for the first's model; empty: one pool of `replicas`.
  /// Replicas are numbered across the pools in order. Without a gateway only the first pool
  /// serves (the cascade is the gateway's).
  std::vector<SimPool> pools;
  InvariantChecks invariant_checks = InvariantChecks::kEveryStep;
  /// Unset: "least-loaded", the replica with the fewest waiting + running requests right now
  /// (an oracle no live balancer has; the default). Set: the gateway routes.
  std::optional<SimGateway> gateway;
  /// Endpoint faults (workload/fleet.h): replicas killed, drained, their metrics stale, slowed.
  std::vector<FleetFault> faults;
  /// Predict each request's TTFT when it is admitted at its arrival (Engine::PredictFirstToken,
  /// within kTtftPredictionHorizonS) and report the errors (RunSummary::
  /// ttft_prediction_abs_error_s, ttft_calibration). Costs a forward run of the scheduler per
  /// admission. Under the forecast policy its own forecasts are reported whether set or not.
  bool predict_ttft = false;
  /// Called once per attempt when it ends (report/attempt_record.h, the load generator's
  /// --records schema): the simulator's answer to the same question `spillway bench` records
  /// live. Unset: no records are built.
  std::function<void(const AttemptRecord&)> on_record;
};

/// How far ahead a TTFT prediction looks, seconds: a request predicted to wait longer is not
/// counted.
inline constexpr Seconds kTtftPredictionHorizonS = 10;

/// Runs `scenario` under `config` and returns its summary (source "sim").
RunSummary Simulate(const Scenario& scenario, const RunConfig& config, const SimOptions& options);

}  // namespace spillway
