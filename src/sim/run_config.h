#pragma once
// What one simulated run uses: the scenario's engine, admission and timeouts settings with its
// SLOs as the admission targets, command-line overrides on top (flags win), resolved once by
// ResolveEngine (engine/resolve.h), the code `spillway serve` resolves its engine with.

#include <string>

#include "admission/admission.h"
#include "config/engine_settings.h"
#include "engine/engine_config.h"
#include "workload/scenario.h"

namespace spillway {

/// Command-line overrides: set fields replace the scenario's.
using RunOverrides = config::EngineSettings;

/// A simulated run's engine configuration (every replica gets the same).
using RunConfig = EngineConfig;

/// The scenario's settings, with slo.ttft_s and slo.tpot_s as admission.ttft_slo_s and
/// tpot_slo_s where the settings give none (the same engine `spillway serve --scenario` runs).
config::EngineSettings ScenarioSettings(const Scenario& scenario);

/// Resolves the run under `policy`. Throws config::ConfigError (naming the scenario file) on
/// an unknown profile or an invalid combination.
RunConfig ResolveRunConfig(const Scenario& scenario, AdmissionPolicy policy,
                           const std::string& profile_dir, const RunOverrides& overrides = {});

}  // namespace spillway
