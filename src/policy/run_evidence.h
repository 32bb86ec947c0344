#pragma once
// Policy values measured by runs (a `sim` or `bench --json` summary, report/run_summary.h):
// the lesson's §4.1 wasted cost under naive FIFO and §7's measured fallback TTFT of the model
// cascade, each with the run as its evidence (the file, the command that made it and when,
// for a simulated run its engine and profile). `policy init --naive-run` and `--cascade-run`
// fill the draft with them. Pure: the runs are read by the caller.

#include <optional>
#include <string>
#include <vector>

#include "core/types.h"
#include "policy/policy.h"
#include "report/run_summary.h"

namespace spillway::policy {

/// The engine time a naive FIFO run spent on work that never served its client in time, in
/// dollars, with the run that measured it.
struct WastedCost {
  double usd = 0;
  Seconds engine_s = 0;  ///< the run's not_completed_engine_s
  Seconds burst_s = 0;   ///< the run's arrival span (duration_s)
  Measurement evidence;  ///< the run file, its command and start, engine and profile
};

/// The wasted cost of the naive FIFO run among `runs` (read from `file`): the run whose policy
/// is `unbounded` (no admission; "unbounded@ROUTER" too), its not-completed engine seconds at
/// `gpu_hour_usd` (else at the run's own price). Throws config::ConfigError naming `file` when
/// no run is unbounded, its engine seconds were not measured, no price is known, or the run
/// does not say its command and start (a summary written before they were recorded).
WastedCost NaiveFifoWastedCost(const std::vector<RunSummary>& runs, const std::string& file,
                               std::optional<double> gpu_hour_usd);

/// The model a cascade fell back to and the p95 TTFT of the requests it completed, seconds.
struct FallbackTtft {
  std::string model;
  Seconds ttft_p95_s = 0;
  std::int64_t completed = 0;  ///< requests it completed (the p95's sample)
  Measurement evidence;
};

/// The fallback of the first run among `runs` (read from `file`) that a model other than the
/// one requested (the run's `profile`, bench's model) served: of those, the one that completed
/// most. Throws config::ConfigError naming `file` when no run has one, its TTFT was not
/// recorded (a summary written before served models had it), or the run does not say its
/// command and start.
FallbackTtft CascadeFallbackTtft(const std::vector<RunSummary>& runs, const std::string& file);

}  // namespace spillway::policy
