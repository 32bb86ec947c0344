#pragma once
// Run summaries read back from JSON: what `spillway sim --json` writes (and `spillway bench`
// will), for `spillway report`. The inverse of summary_json.h.

#include <stdexcept>
#include <string_view>
#include <vector>

#include "report/run_summary.h"

namespace spillway {

/// A run JSON text that cannot be used. what() names the input and, when one key is at fault,
/// its path, e.g. "runs.json: run 2 of 3: key 'ttft_s.p95': expected a number, got string".
class RunJsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses `text`, one run object or a non-empty array of them (as `sim --compare --json`
/// writes); `source` names the input in errors (a file name).
///
/// Required, with these types (the "Run summary" contract of architecture.md): `policy`
/// (string); `offered`, `admitted`, `completed`, `good`, `abandoned_after_admission`,
/// `max_waiting`, `preemptions` (integers); `goodput_rps`, `slo_attainment` (numbers);
/// `engine_busy_s`, `wasted_engine_s` (numbers, or null: not measured, read as nullopt);
/// `rejected` {total, by_status, by_reason}; `ttft_s`, `tpot_s`, `itl_s`, `e2e_s` {p50, p95,
/// p99, mean, max, count}; `timeseries` [{t, offered, admitted, rejected, completed, good,
/// waiting, running, kv_usage}]. Every other key the writer emits is optional (zero, empty or
/// absent when missing: `ttft_histogram_s`, `slo` and `retry_after` are newer than the first
/// JSON files; `not_completed_engine_s` missing or null reads as nullopt, not measured) but
/// must have its type when present. An objective's `value` null reads as +infinity
/// (summary_json.h). Unknown keys are ignored.
/// Throws RunJsonError on invalid JSON, a missing required key or a value of the wrong type.
std::vector<RunSummary> ParseRunSummaries(std::string_view text, std::string_view source);

/// The runs of the file at `path` (config::ReadInputFile reads it: a directory, a file that
/// cannot be read or one past its cap throws too). Throws RunJsonError "PATH: why".
std::vector<RunSummary> ReadRunSummaries(const std::string& path);

}  // namespace spillway
