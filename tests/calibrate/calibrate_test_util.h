#pragma once
// Helpers shared by the calibrate tests (one unity batch: names at file scope are unique within
// the test binary).

#include <cstdint>
#include <optional>
#include <string>

#include "config/engine_settings.h"
#include "config/profile.h"
#include "engine/resolve.h"

namespace spillway::calibrate_test {

/// profiles/seed-a100-7b.yaml, the profile the fits start from.
inline Profile SeedProfile() {
  return LoadProfile(std::string(SPILLWAY_SOURCE_DIR) + "/profiles/seed-a100-7b.yaml");
}

/// The seed profile's engine with a fixed token budget and no SLO-derived budgets, as a vLLM
/// target's flags give it; admission off. `long_prefill_token_threshold`: the engine's when
/// unset, 0 for none.
inline EngineConfig FixedBudgetEngine(
    std::int32_t budget, std::optional<std::int64_t> long_prefill_token_threshold = std::nullopt) {
  config::EngineSettings s;
  s.profile = std::string(SPILLWAY_SOURCE_DIR) + "/profiles/seed-a100-7b.yaml";
  s.policy = "unbounded";
  s.slo_budgets = false;
  s.max_num_batched_tokens = budget;
  s.long_prefill_token_threshold = long_prefill_token_threshold;
  return ResolveEngine(s, std::string(SPILLWAY_SOURCE_DIR) + "/profiles");
}

}  // namespace spillway::calibrate_test
