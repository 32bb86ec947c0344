#pragma once
// A scenario: the traffic (arrival process and request classes), the clients' behaviour
// (timeouts, retries), the SLOs that define goodput, and optional engine, admission and
// timeouts settings (the keys of config/engine_settings.h).
// The same file drives `spillway sim` and `spillway bench`. YAML schema: docs/scenarios.md.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/engine_settings.h"
#include "core/types.h"
#include "workload/fleet.h"

namespace spillway {

/// A token-count distribution. kFixed uses `value`; kUniform draws an integer in [min, max];
/// kLognormal draws exp(N(mu, sigma)) with mu, sigma chosen so the mean is `mean` and the
/// coefficient of variation `cv`, clamped to [min, max].
struct TokenDist {
  enum class Kind : std::uint8_t { kFixed, kUniform, kLognormal };
  Kind kind = Kind::kFixed;
  std::int32_t value = 0;
  std::int32_t min = 1;
  std::int32_t max = 1;
  double mean = 0;
  double cv = 0;
  /// Mean of the distribution (exact for fixed/uniform, `mean` for lognormal).
  double Mean() const;
};

struct RequestClass {
  std::string name;
  double share = 1.0;  ///< relative weight; shares are normalised over all classes
  TokenDist prompt_tokens;
  /// The length the model generates. Without `max_tokens` the clients send it as max_tokens
  /// with ignore_eos (generated exactly, known to admission); with it, it is the hidden length
  /// at which the (emulated) model samples EOS.
  TokenDist output_tokens;
  /// > 0: the max_tokens every request of the class sends (a cap, as real clients send 256 or
  /// 1024), with EOS honoured: a request generates min(output_tokens, max_tokens) tokens,
  /// finish reason stop before the cap. 0: exact lengths (see output_tokens).
  std::int32_t max_tokens = 0;
  std::int32_t priority = 0;  ///< lower is more urgent
  /// True when the file gives `priority` (the load generator then sends it as
  /// X-Priority-Class; a class without one sends none).
  bool priority_given = false;
  std::string tenant = "default";
  /// > 0: the class's requests are drawn from this many distinct prompts (an FAQ: the same
  /// request asked again, which an exact-result cache can answer), each with its own fixed
  /// prompt and output length; 0 (the default): every request is new.
  std::int32_t distinct_prompts = 0;
  /// > 0: every request of the class begins with the same system prompt of this many tokens
  /// (a request whose prompt is shorter has the system prompt's first prompt_tokens), which
  /// the engine's prefix caching can reuse; 0 (the default): no shared prefix.
  std::int32_t shared_prefix_tokens = 0;
  /// Its flow for fair shedding (admission/fair_share.h), sent as the
  /// x-gateway-inference-fairness-id header; empty (the default): the class's name.
  std::string fairness_id;
  std::string_view flow() const { return fairness_id.empty() ? name : fairness_id; }
};

struct RateStep {
  double rate_rps = 0;
  Seconds duration_s = 0;
  /// The class mix during this step: mix[i] is the share of classes[i] (0 = none of it).
  /// Empty: the classes' own shares. From the step's `mix: {class: share, ...}`.
  std::vector<double> mix;
};

enum class TraceFormat : std::uint8_t { kAzureCsv, kMooncakeJsonl };

/// One request of a trace (trace_reader.h reads them).
struct TraceRecord {
  Seconds time_s = 0;  ///< seconds since the trace's first record (>= 0, non-decreasing)
  std::int32_t prompt_tokens = 0;
  std::int32_t output_tokens = 0;
  /// Mooncake traces: the ids of the record's consecutive prompt blocks of
  /// kMooncakeBlockTokens (trace_reader.h) tokens, equal ids = equal tokens (shared prefixes);
  /// empty for Azure traces and records without them.
  std::vector<std::uint64_t> hash_ids;
};

struct ArrivalProcess {
  enum class Kind : std::uint8_t { kPoisson, kSteps, kTrace, kBurst };
  Kind kind = Kind::kPoisson;
  double rate_rps = 0;  ///< kPoisson
  /// kPoisson and kBurst: the schedule's length; for kTrace the replay window (0 = whole
  /// trace).
  Seconds duration_s = 0;
  std::int64_t burst_count = 0;  ///< kBurst: this many requests at once, at 0 s
  std::vector<RateStep> steps;   ///< kSteps: Poisson at each rate for its duration, in order
  // kTrace
  std::string trace_file;  ///< resolved path
  TraceFormat trace_format = TraceFormat::kAzureCsv;
  /// The whole trace, read once when the scenario is loaded (shared by copies of the
  /// scenario); null for a scenario built in code, whose trace is then read on use.
  std::shared_ptr<const std::vector<TraceRecord>> trace_records;
  Seconds trace_start_s = 0;     ///< offset into the trace (after time scaling)
  double time_scale = 1.0;       ///< multiplies trace timestamps (0.5 = twice as fast)
  double rate_multiplier = 1.0;  ///< each trace request replayed this many times on average
  /// > 0: trace requests send this max_tokens and the record's output length is the hidden
  /// one the model stops at (EOS); 0: the record's output length is sent as max_tokens with
  /// ignore_eos (exact).
  std::int32_t trace_max_tokens = 0;
};

enum class RetryPolicy : std::uint8_t { kNone, kFixed, kBackoffJitter };

struct ClientBehaviour {
  Seconds ttft_timeout_s = kNever;   ///< abandon when no first token by then (per attempt)
  Seconds total_timeout_s = kNever;  ///< abandon when not finished by then (per attempt)
  RetryPolicy retry = RetryPolicy::kNone;
  std::int32_t max_attempts = 1;   ///< attempts in all, including the first
  Seconds retry_interval_s = 0.1;  ///< kFixed: the sleep between attempts
  Seconds backoff_base_s = 1.0;    ///< kBackoffJitter: base when no Retry-After is given
  Seconds backoff_max_s = 30.0;
  Seconds jitter_s = 0.5;         ///< kBackoffJitter: uniform [0, jitter_s) added
  double retry_budget = 0.0;      ///< retries allowed per first attempt (0.2 = 20%); 0 = none
  bool use_retry_after = true;    ///< kBackoffJitter: base = Retry-After when present
  bool retry_on_timeout = false;  ///< also retry after the client's own timeout
};

/// Per-request SLOs (goodput counts requests meeting every one given) and population
/// objectives (reported pass/fail).
struct Slo {
  std::optional<Seconds> ttft_s;
  std::optional<Seconds> tpot_s;
  std::optional<Seconds> e2e_s;
};

struct Objectives {
  std::optional<Seconds> ttft_p95_s;
  std::optional<Seconds> tpot_p95_s;
  std::optional<Seconds> e2e_p99_s;
  std::optional<double> goodput_fraction;  ///< good / offered (slo_attainment)
};

/// Tenants' token buckets a scenario declares (admission.tenants).
struct ScenarioAdmission {
  struct Tenant {
    std::string name;
    double rate_rps = 0;
    double burst = 1;
  };
  std::vector<Tenant> tenants;
};

struct Scenario {
  std::string name;
  std::string file;  ///< where it was loaded from
  std::uint64_t seed = 1;
  ArrivalProcess arrival;
  std::vector<RequestClass> classes;
  ClientBehaviour client;
  Slo slo;
  Objectives objectives;
  /// The engine, admission and timeouts settings the file gives (config/engine_settings.h);
  /// command-line flags override them, unset ones take the engine's defaults.
  config::EngineSettings settings;
  ScenarioAdmission admission;
  Fleet fleet;  ///< replicas, router and endpoint faults (workload/fleet.h); empty when absent

  /// Length of the arrival schedule, seconds (sum of steps, the Poisson duration, or the
  /// trace window).
  Seconds ArrivalSpan() const;
  /// The trace's records: those read at load time, else read from trace_file now (throws
  /// config::ConfigError like ReadTrace). Trace scenarios only.
  std::shared_ptr<const std::vector<TraceRecord>> TraceRecords() const;
};

/// Loads and validates a scenario file. Relative trace paths are resolved against the
/// scenario file's directory, then the current directory. Throws config::ConfigError naming
/// the file, line, field and value.
Scenario LoadScenario(const std::string& path);
/// The same from YAML text (tests); `origin` names it in errors, `base_dir` resolves traces.
Scenario LoadScenarioFromString(const std::string& yaml, const std::string& origin,
                                const std::string& base_dir = ".");

}  // namespace spillway
