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
// summary. The engine invariants are checked after steps (see InvariantChecks); a failure
// throws SimInvariantError naming the seed. Requests longer than the engine's max_model_len
// are refused at the door with 400 context_length_exceeded, as the server does. Throws
// config::ConfigError when the scenario produces no arrivals.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "report/run_summary.h"
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

struct SimOptions {
  std::uint64_t seed = 1;
  std::int32_t replicas = 1;
  InvariantChecks invariant_checks = InvariantChecks::kEveryStep;
};

/// Runs `scenario` under `config` and returns its summary (source "sim").
RunSummary Simulate(const Scenario& scenario, const RunConfig& config, const SimOptions& options);

}  // namespace spillway
