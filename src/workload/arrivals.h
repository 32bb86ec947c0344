#pragma once
// Turns a scenario into the list of first-attempt arrivals: when each request is sent and its
// shape. Deterministic for a given scenario and seed.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/rng.h"
// PromptSegments only: a plain struct of the request's vocabulary, no link dependency on sched.
#include "core/prompt_segments.h"
#include "workload/scenario.h"

namespace spillway {

struct Arrival {
  Seconds time_s = 0;  ///< seconds from the start of the run
  std::int32_t prompt_tokens = 0;
  /// The length the model would generate: exactly max_tokens under ignore_eos; else the hidden
  /// length at which the emulated model samples EOS (never shown to admission).
  std::int32_t output_tokens = 0;
  std::int32_t max_tokens = 0;   ///< what the client sends
  bool ignore_eos = true;        ///< sent with ignore_eos: generates exactly max_tokens
  std::int32_t class_index = 0;  ///< into Scenario::classes; -1 for trace records
  std::int32_t priority = 0;
  std::string_view tenant;  ///< points into the Scenario (outlives the arrivals)
  /// Which of its class's distinct prompts it asks (RequestClass::distinct_prompts), the same
  /// for every arrival asking the same: the load generator sends the same body for it. 0: a
  /// prompt no other arrival asks.
  std::uint64_t prompt_id = 0;
  /// What its prompt shares with others' (core/prompt_segments.h), for the engine's prefix caching:
  /// its class's system prompt (RequestClass::shared_prefix_tokens, one segment of that many
  /// tokens), the rest of a prompt asked again (prompt_id), or a trace record's hash_ids
  /// (segments of kMooncakeBlockTokens). One object is shared by every arrival with the same
  /// segments (and by a retry, which resends the arrival). Null: the whole prompt is its own.
  std::shared_ptr<const PromptSegments> prompt_segments;

  /// The tokens it generates when it runs to its end: max_tokens under ignore_eos, else
  /// min(output_tokens, max_tokens).
  std::int32_t generated_tokens() const {
    return ignore_eos ? max_tokens : std::min(output_tokens, max_tokens);
  }
};

/// All first-attempt arrivals of `scenario`, sorted by time. For kTrace the trace is read from
/// disk (throws config::ConfigError naming the file and line on malformed input); trace
/// records take the first class's priority and tenant.
std::vector<Arrival> GenerateArrivals(const Scenario& scenario, std::uint64_t seed);

/// Draws one value from `dist` (>= 1).
std::int32_t Draw(const TokenDist& dist, Rng& rng);

}  // namespace spillway
