#pragma once
// Turns a scenario into the list of first-attempt arrivals: when each request is sent and its
// shape. Deterministic for a given scenario and seed.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/rng.h"
#include "workload/scenario.h"

namespace spillway {

struct Arrival {
  Seconds time_s = 0;  ///< seconds from the start of the run
  std::int32_t prompt_tokens = 0;
  std::int32_t output_tokens = 0;  ///< requested max_tokens (generated exactly, ignore_eos)
  std::int32_t class_index = 0;    ///< into Scenario::classes; -1 for trace records
  std::int32_t priority = 0;
  std::string_view tenant;  ///< points into the Scenario (outlives the arrivals)
  /// Which of its class's distinct prompts it asks (RequestClass::distinct_prompts), the same
  /// for every arrival asking the same: the load generator sends the same body for it. 0: a
  /// prompt no other arrival asks.
  std::uint64_t prompt_id = 0;
};

/// All first-attempt arrivals of `scenario`, sorted by time. For kTrace the trace is read from
/// disk (throws config::ConfigError naming the file and line on malformed input); trace
/// records take the first class's priority and tenant.
std::vector<Arrival> GenerateArrivals(const Scenario& scenario, std::uint64_t seed);

/// Draws one value from `dist` (>= 1).
std::int32_t Draw(const TokenDist& dist, Rng& rng);

}  // namespace spillway
