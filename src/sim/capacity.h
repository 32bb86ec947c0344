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
#include <vector>

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

/// Throws config::ConfigError when the scenario has no TTFT or TPOT SLO, or neither classes
/// with token counts nor a trace.
CapacityResult MeasureCapacity(const Scenario& scenario, const RunConfig& config,
                               const CapacityOptions& options);

/// {"mu_rps", "at_search_ceiling", "probes": [{rate_rps, completed_fraction, ttft_p95_s,
/// tpot_p95_s, within_slo}]} as indented JSON.
std::string CapacityToJson(const CapacityResult& result);

}  // namespace spillway
