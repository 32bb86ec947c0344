#pragma once
// Helpers shared by the simulator tests: load a shipped scenario, resolve, run.

#include <string>

#include "sim/run_config.h"
#include "sim/simulator.h"
#include "workload/scenario.h"

namespace spillway::simtest {

inline std::string RepoPath(const std::string& relative) {
  return std::string(SPILLWAY_SOURCE_DIR) + "/" + relative;
}

inline RunConfig Resolve(const Scenario& sc, AdmissionPolicy policy,
                         const RunOverrides& overrides = {}) {
  return ResolveRunConfig(sc, policy, RepoPath("profiles"), overrides);
}

/// Checks the engines' invariants after every step unless `checks` says otherwise (a full check
/// is O(KV blocks): kAmortized for long runs on large pools).
inline RunSummary RunSim(const Scenario& sc, AdmissionPolicy policy,
                         const RunOverrides& overrides = {}, std::uint64_t seed = 1,
                         InvariantChecks checks = InvariantChecks::kEveryStep) {
  SimOptions opt;
  opt.seed = seed;
  opt.invariant_checks = checks;
  return Simulate(sc, Resolve(sc, policy, overrides), opt);
}

}  // namespace spillway::simtest
