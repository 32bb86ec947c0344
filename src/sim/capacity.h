#pragma once
// Measures the sustainable rate mu of a scenario's request mix on its engine: the highest
// steady Poisson rate at which p95 TTFT and p95 TPOT stay within the scenario's SLOs
// (overload-and-failure-handling.txt: "Sustainable service rate (mu)").
//
// Algorithm: bisection on the rate between lo and hi. Each probe simulates `probe_s` seconds
// of Poisson arrivals of the scenario's classes, admission `unbounded`, no client timeouts or
// retries, and checks the p95s of requests sent after the first `warmup_s` seconds. The SLOs
// are monotone in the rate up to noise; the answer is reported to `tolerance_rps`.

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
  double ttft_p95_s = 0;
  double tpot_p95_s = 0;
  bool within_slo = false;
};

struct CapacityResult {
  double mu_rps = 0;  ///< highest probed rate within the SLOs (0 if even lo_rps misses)
  std::vector<CapacityProbe> probes;
};

/// Throws config::ConfigError when the scenario has no TTFT or TPOT SLO or no classes.
CapacityResult MeasureCapacity(const Scenario& scenario, const RunConfig& config,
                               const CapacityOptions& options);

}  // namespace spillway
