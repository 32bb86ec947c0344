#pragma once
// Population objectives of a scenario (e.g. p99 E2E <= 5 s) checked against a run summary.

#include "report/run_summary.h"
#include "workload/scenario.h"

namespace spillway {

/// Appends one ObjectiveResult per objective the scenario gives to `summary->objectives`:
/// ttft_p95_s, tpot_p95_s, e2e_p99_s (value <= target passes; no samples fails) and
/// goodput_fraction
/// (slo_attainment = good / offered, value >= target passes).
void EvaluateObjectives(const Objectives& objectives, RunSummary* summary);

}  // namespace spillway
