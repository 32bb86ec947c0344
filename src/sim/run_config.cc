#include "sim/run_config.h"

#include "engine/resolve.h"

namespace spillway {

config::EngineSettings ScenarioSettings(const Scenario& sc) {
  config::EngineSettings s = sc.settings;
  if (!s.ttft_slo_s) {
    s.ttft_slo_s = sc.slo.ttft_s;
  }
  if (!s.tpot_slo_s) {
    s.tpot_slo_s = sc.slo.tpot_s;
  }
  return s;
}

RunConfig ResolveRunConfig(const Scenario& sc, AdmissionPolicy policy,
                           const std::string& profile_dir, const RunOverrides& overrides) {
  config::EngineSettings s = config::Overlay(ScenarioSettings(sc), overrides);
  s.policy = std::string(ToString(policy));
  TenantLimits tenants;
  for (const auto& t : sc.admission.tenants) {
    tenants[t.name] = TenantLimit{t.rate_rps, t.burst};
  }
  return ResolveEngine(s, profile_dir, tenants, sc.file);
}

}  // namespace spillway
