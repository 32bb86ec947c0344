#pragma once
// `spillway policy init`: a draft policy from a capacity run and a workload scenario. Every
// value of the lesson's template is filled and sourced: the measured ones (mu, the binding SLO)
// from the run with its evidence, the physical ones (weights, KV bytes per token, GPU memory)
// from the engine profile with their arithmetic, the engine flags from the engine the scenario
// resolves to, the rates, SLOs and timeouts from the scenario, and the lesson's own guidance
// (retries, the pages, the cascade's clamp) as decisions that say so. What no file can know
// (the GPU's price) is left at 0 with a decision asking for it. Pure but for ReadCapacityRun.

#include <optional>
#include <string>
#include <vector>

#include "config/profile.h"
#include "engine/engine_config.h"
#include "policy/run_evidence.h"
#include "workload/scenario.h"

namespace spillway::policy {

/// A capacity run: what `spillway sim --scenario FILE --measure-capacity --json RUN` writes
/// (sim/capacity.h, CapacityToJson), and where it is.
struct CapacityRun {
  std::string file;
  double mu_rps = 0;
  bool at_search_ceiling = false;
  std::string binding_slo;  ///< "ttft", "tpot" or "neither"
  std::string scenario;
  std::string profile;
  std::string engine;
  std::string command;
  std::string measured_at;  ///< "YYYY-MM-DDThh:mm:ssZ"
};

/// Reads RUN. Throws config::ConfigError naming the file and the key missing or of the wrong
/// type (a run written before the keys of its provenance existed lacks them: measure again).
CapacityRun ReadCapacityRun(const std::string& path);

struct InitInputs {
  CapacityRun run;
  const Scenario* scenario = nullptr;  ///< the workload (non-null)
  std::string scenario_path;           ///< as the policy names it
  /// The engine the scenario resolves to (engine/resolve.h, with its admission policy):
  /// its profile and flags.
  const EngineConfig* engine = nullptr;
  std::string name;                      ///< policy.name; "" for a name from the profile
  std::optional<double> gpu_hour_usd;    ///< the GPU's price, $/h
  std::string gpu_price_source;          ///< where the price comes from (its bound)
  std::optional<WastedCost> naive_fifo;  ///< cost.wasted_usd_naive_fifo, when measured
  std::optional<FallbackTtft> cascade;   ///< cascade.fallback_model and its TTFT, when measured
};

/// The draft as YAML (docs/policy.md's format), readable by ReadPolicyString; `policy check`
/// finds no error in it while its measurement is fresh.
std::string InitPolicyYaml(const InitInputs& in);

/// The longest prompt the scenario can send, tokens: its classes' largest prompt_tokens, or
/// for a trace the longest prompt of its records.
std::int32_t MaxPromptTokens(const Scenario& scenario);

}  // namespace spillway::policy
