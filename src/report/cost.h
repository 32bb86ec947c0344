#pragma once
// Overload cost accounting (../shared/seeds/overload-and-failure-handling.txt §4.1): engine
// seconds priced at the GPU's hourly rate. One engine is taken to be one GPU, so a run's engine
// seconds (summed over its replicas) are GPU seconds; an engine spanning several GPUs (tensor
// parallel) costs that many times more. Pure.

#include <optional>

#include "core/types.h"
#include "report/run_summary.h"

namespace spillway {

/// `engine_s` at `gpu_hour_usd` dollars per GPU hour, dollars.
inline double UsdOf(Seconds engine_s, double gpu_hour_usd) {
  return engine_s * gpu_hour_usd / 3600.0;
}

/// A run's engine time in dollars: each nullopt when the run has no price
/// (RunSummary::gpu_hour_usd) or did not measure those seconds.
struct EngineCost {
  std::optional<double> busy_usd;
  std::optional<double> wasted_usd;         ///< on requests whose client had already gone
  std::optional<double> not_completed_usd;  ///< on requests that never completed for their client
};

EngineCost CostOf(const RunSummary& run);

}  // namespace spillway
