#pragma once
// The side-by-side comparison table printed by `spillway sim --compare` and the demo.

#include <string>
#include <vector>

#include "report/run_summary.h"

namespace spillway {

/// A plain-text table, one column per run: offered, admitted, shed by status, completed,
/// goodput (whole run and per phase), TTFT p50/p95/p99, TPOT p95, E2E p99, abandoned, wasted
/// engine seconds, max waiting, preemptions.
std::string CompareTable(const std::vector<RunSummary>& runs);

}  // namespace spillway
