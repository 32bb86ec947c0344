#pragma once
// The side-by-side comparison table printed by `spillway sim --compare` and the demo, and its
// rows for `spillway report`.

#include <string>
#include <vector>

#include "report/run_summary.h"

namespace spillway {

/// One row of the comparison: a label and one formatted cell per run.
struct TableRow {
  std::string label;               ///< e.g. "TTFT p95 s (served)"
  std::vector<std::string> cells;  ///< one per run, in the runs' order
};

/// The rows of CompareTable (its single definition, shared with the HTML report): counts,
/// rates in req/s, latencies in seconds with 3 decimals, engine time in seconds with 1 ("n/a"
/// when the run did not measure it); one row per phase and per objective of the first run
/// ("-" for a run without it; an objective cell reads "pass" or "FAIL" and the run's value,
/// "inf" when the percentile fell on a failed request).
std::vector<TableRow> CompareRows(const std::vector<RunSummary>& runs);

/// A plain-text table, one column per run: offered, admitted, shed by status, completed,
/// goodput (whole run and per phase), TTFT p50/p95/p99, TPOT p95, E2E p99, abandoned, wasted
/// engine seconds, max waiting, preemptions.
std::string CompareTable(const std::vector<RunSummary>& runs);

}  // namespace spillway
