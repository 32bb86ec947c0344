#pragma once
// Population objectives of a scenario (e.g. p99 E2E <= 5 s) checked against a run summary.

#include "report/run_summary.h"
#include "workload/scenario.h"

namespace spillway {

/// Appends one ObjectiveResult per objective the scenario gives to `summary->objectives`:
/// ttft_p95_s, tpot_p95_s, e2e_p99_s (value <= target passes; no samples fails) and
/// goodput_fraction (slo_attainment = good / offered, value >= target passes).
///
/// The latency objectives cover the admitted requests that completed or failed (a 504, an
/// error event in the stream, any error after admission), not only those served: a failed
/// request counts as +infinity in e2e_p99_s (it never finished) and, when it got no first
/// token, in ttft_p95_s (RunSummary::e2e_objective_s, ttft_objective_s). So e2e_p99_s fails
/// once more than 1% of those requests failed, and its value is then +infinity. tpot_p95_s
/// covers completed requests (a failed one has no TPOT). Requests refused at the door,
/// dropped at the queue head or abandoned by their client are not in the latency objectives.
void EvaluateObjectives(const Objectives& objectives, RunSummary* summary);

}  // namespace spillway
