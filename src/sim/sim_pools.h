#pragma once
// The pools of a fleet scenario (workload/fleet.h, `fleet.pools`: the model cascade's) resolved
// for one run: each pool's engine under the run's admission policy and overrides, with its own
// profile when it names one, and its fallbacks as pool indices. `spillway sim` and the tests
// resolve them here.

#include <string>
#include <vector>

#include "sim/run_config.h"
#include "sim/simulator.h"
#include "workload/scenario.h"

namespace spillway {

/// SimOptions::pools for `scenario` under `policy` (empty when the fleet has no pools). Throws
/// config::ConfigError (naming the scenario file) on an unknown profile.
std::vector<SimPool> ResolveSimPools(const Scenario& scenario, AdmissionPolicy policy,
                                     const std::string& profile_dir,
                                     const RunOverrides& overrides = {});

}  // namespace spillway
