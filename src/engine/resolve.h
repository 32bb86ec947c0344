#pragma once
// The one place where an engine's settings become its configuration: defaults, the profile,
// the SLO-derived batch budgets (sched/slo_budget.h), the estimator priors and decode-step
// table (admission/priors.h), the request deadline and the queue bounds. `spillway sim` (per
// replica) and `spillway serve` both call it, so for the same settings they run the same
// engine.

#include <map>
#include <string>

#include "admission/admission.h"
#include "config/engine_settings.h"
#include "engine/engine_config.h"

namespace spillway {

/// The default long-prefill threshold (engine.long_prefill_token_threshold unset): a prompt is
/// long when an idle engine takes more than this fraction of the TTFT SLO to prefill it (and
/// it needs more than one step's token budget); while others wait it takes at most half of
/// each step (SchedulerConfig::long_prefill_max_chunk_tokens). Issue 12, finding 2: with no
/// cap, an 11k-token prompt at the head of the queue took every step's budget.
inline constexpr double kLongPrefillSloFraction = 0.1;

/// Tenants' token buckets, by tenant name.
using TenantLimits = std::map<std::string, TenantLimit, std::less<>>;

/// Resolves `settings` (unset values take config::EngineDefaults() or are derived) with the
/// profile looked up in `profile_dir`. `origin` names the settings' source in errors. Throws
/// config::ConfigError on an unknown profile or an impossible combination (an explicit
/// max_num_batched_tokens below max_model_len without chunked prefill).
EngineConfig ResolveEngine(const config::EngineSettings& settings, const std::string& profile_dir,
                           const TenantLimits& tenants = {}, const std::string& origin = "");

/// The admission policy of resolved settings (predictive unless set).
AdmissionPolicy PolicyOf(const config::EngineSettings& settings);

/// The long-prefill rule of a resolved scheduler, for start-up lines: "long prefills above N
/// prompt tokens (at most M a step while others wait)", or "" when there is none.
std::string LongPrefillSummary(const SchedulerConfig& scheduler);

}  // namespace spillway
