#include "sim/sim_pools.h"

namespace spillway {

std::vector<SimPool> ResolveSimPools(const Scenario& sc, AdmissionPolicy policy,
                                     const std::string& profile_dir,
                                     const RunOverrides& overrides) {
  std::vector<SimPool> out;
  for (const FleetPool& p : sc.fleet.pools) {
    RunOverrides settings = overrides;
    if (!p.profile.empty()) {
      settings.profile = p.profile;
    }
    SimPool pool{p.model,
                 p.replicas,
                 ResolveRunConfig(sc, policy, profile_dir, settings),
                 {},
                 routing::DegradeConfig{p.degrade_max_tokens, p.degrade_ttft_fraction}};
    for (const std::string& f : p.fallbacks) {
      for (std::size_t k = 0; k < sc.fleet.pools.size(); ++k) {
        if (sc.fleet.pools[k].model == f) {
          pool.fallbacks.push_back(static_cast<std::int32_t>(k));
        }
      }
    }
    out.push_back(std::move(pool));
  }
  return out;
}

}  // namespace spillway
