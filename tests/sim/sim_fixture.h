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

inline RunSummary RunSim(const Scenario& sc, AdmissionPolicy policy,
                         const RunOverrides& overrides = {}, std::uint64_t seed = 1) {
  SimOptions opt;
  opt.seed = seed;
  return Simulate(sc, Resolve(sc, policy, overrides), opt);
}

}  // namespace spillway::simtest
