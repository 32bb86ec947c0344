#pragma once
// Measures the sustainable rate mu of a scenario's request mix on one engine replica: the
// highest steady arrival rate at which p95 TTFT and p95 TPOT stay within the scenario's SLOs
// (overload-and-failure-handling.txt: "Sustainable service rate (mu)").
//
// Algorithm: bisection on the rate between lo and hi. Each probe simulates `probe_s` seconds
// (admission `unbounded`, no client timeouts or retries, one replica) and passes when at least
// 95% of the offered requests complete and the p95s are within the SLOs. Arrivals are Poisson
// over the scenario's classes; for a trace scenario they are the trace itself, replayed faster
// or slower (time_scale) so that its mean rate is the probe rate, keeping its mix and its
// burstiness. The SLOs are monotone in the rate up to noise; the answer is reported to
// `tolerance_rps`. When even hi_rps passes, the result says so (at_search_ceiling).

#include <string>
#include <string_view>
#include <vector>

#include "report/run_summary.h"
#include "sim/run_config.h"
#include "workload/scenario.h"

namespace spillway {

struct CapacityOptions {
  double lo_rps = 0.5;
  double hi_rps = 200;
  double tolerance_rps = 0.1;
  Seconds probe_s = 300;
  std::uint64_t seed = 1;
};

struct CapacityProbe {
  double rate_rps = 0;
  double completed_fraction = 0;
  double ttft_p95_s = 0;
  double tpot_p95_s = 0;
  bool within_slo = false;
};

struct CapacityResult {
  double mu_rps = 0;  ///< highest probed rate within the SLOs (0 if even lo_rps misses)
  bool at_search_ceiling = false;  ///< hi_rps itself passed: mu is at least mu_rps
  std::vector<CapacityProbe> probes;
};

/// A probe's verdict on a run of `scenario`'s mix at `rate_rps`: within_slo when at least 95%
/// of the offered requests completed and the p95 TTFT and TPOT are within the scenario's SLOs
/// (which must be set). `spillway calibrate` judges its live run at mu by it too.
CapacityProbe JudgeCapacityRun(const RunSummary& run, const Scenario& scenario, double rate_rps);

/// Throws config::ConfigError when the scenario has no TTFT or TPOT SLO, or neither classes
/// with token counts nor a trace.
CapacityResult MeasureCapacity(const Scenario& scenario, const RunConfig& config,
                               const CapacityOptions& options);

/// The scenario one probe at `rate_rps` runs (client retries and timeouts off): Poisson
/// arrivals of the scenario's mix for `duration_s`, or its trace replayed at that mean rate and
/// cut at `duration_s`. `spillway calibrate` runs it live at mu. Throws config::ConfigError as
/// MeasureCapacity does.
Scenario CapacityProbeScenario(const Scenario& scenario, double rate_rps, Seconds duration_s,
                               std::uint64_t seed);

/// Which SLO the rate ran into first: of the failing probes above mu, the slowest one's
/// "ttft" (its p95 TTFT over the SLO), else "tpot", else "neither" (fewer than 95% completed);
/// "neither" also when no probe above mu failed (at the search ceiling).
std::string_view BindingSlo(const CapacityResult& result, Seconds ttft_slo_s, Seconds tpot_slo_s);

/// Where a capacity measurement came from, for the policy that cites it (`spillway policy
/// init` reads it back): the scenario file, the engine profile and engine, the command line,
/// when (UTC, "YYYY-MM-DDThh:mm:ssZ") and the SLOs it was measured against.
struct CapacityProvenance {
  std::string scenario;
  std::string profile;
  std::string engine;
  std::string command;
  std::string measured_at;
  Seconds ttft_slo_s = 0;
  Seconds tpot_slo_s = 0;
};

/// {"mu_rps", "at_search_ceiling", "probes": [{rate_rps, completed_fraction, ttft_p95_s,
/// tpot_p95_s, within_slo}], "binding_slo", "scenario", "profile", "engine", "command",
/// "measured_at", "slo": {"ttft_s", "tpot_s"}} as one line of JSON.
std::string CapacityToJson(const CapacityResult& result, const CapacityProvenance& provenance);

}  // namespace spillway
