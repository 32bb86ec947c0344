#include "report/cost.h"

namespace spillway {
namespace {

std::optional<double> Priced(const std::optional<double>& engine_s,
                             const std::optional<double>& gpu_hour_usd) {
  if (!engine_s || !gpu_hour_usd) {
    return std::nullopt;
  }
  return UsdOf(*engine_s, *gpu_hour_usd);
}

}  // namespace

EngineCost CostOf(const RunSummary& run) {
  return {Priced(run.engine_busy_s, run.gpu_hour_usd),
          Priced(run.wasted_engine_s, run.gpu_hour_usd),
          Priced(run.not_completed_engine_s, run.gpu_hour_usd)};
}

}  // namespace spillway
