#pragma once
// RunSummary as JSON: the keys of architecture.md's "Run summary", shared by sim and bench.

#include <string>

#include "report/run_summary.h"

namespace spillway {

/// Indented JSON text of `summary` (keys in a fixed order; percentiles as {p50, p95, p99,
/// mean, max, count} in seconds). `engine_busy_s`, `wasted_engine_s` and
/// `not_completed_engine_s` are null when the run did not measure them; an objective's
/// `value` is null when it is +infinity (JSON has no infinity; report/objectives.h).
std::string SummaryToJson(const RunSummary& summary);

/// Several summaries as one JSON array.
std::string SummariesToJson(const std::vector<RunSummary>& summaries);

}  // namespace spillway
