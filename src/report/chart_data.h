#pragma once
// The numbers behind the report's charts, as gnuplot data files: whitespace-separated columns,
// one row per line, '#' comments. Pure.

#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/histogram.h"
#include "report/run_summary.h"

namespace spillway {

/// One run's `timeseries`, a row per second with columns: 1 t + 0.5 (middle of the second:
/// counts are events in [t, t+1)), 2 t + 1 (when the gauges were sampled), 3 offered,
/// 4 admitted, 5 good, 6 rejected, 7 completed (per second), 8 waiting, 9 running (requests),
/// 10 KV usage (percent of blocks). `label` goes into a comment.
std::string TimeseriesData(const RunSummary& run, std::string_view label);

/// The cumulative distribution of a histogram at its bucket edges: (edge, fraction of all
/// samples, overflow included, that are <= edge), from the lower edge of the first non-empty
/// bucket (fraction 0; bounds[0] / 1.25 for the first bucket) to the last non-empty one.
/// Empty when the histogram holds no sample.
std::vector<std::pair<double, double>> CdfPoints(const BucketCounts& histogram);

/// Two-column data of `points`.
std::string PointsData(const std::vector<std::pair<double, double>>& points);

/// Values to draw as clustered bars: one cluster per category, one bar per run.
struct BarTable {
  std::vector<std::string> categories;
  std::vector<std::vector<double>> values;  ///< [category][run]
};

/// Requests refused at the door by reason (`rejected.by_reason`, reasons in name order), then
/// "dropped at queue head" when any run dropped admitted requests there. No category when
/// nothing was shed.
BarTable ShedByReason(const std::vector<RunSummary>& runs);

/// A value a run did not measure, in a BarTable: BarData writes it as "n/a", which gnuplot
/// does not read as a number (the chart draws no bar and labels it "n/a").
inline constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

/// Engine seconds on requests whose client had gone (`wasted_engine_s`) and on requests that
/// never completed (`not_completed_engine_s`); kNotMeasured where a run has no figure.
BarTable EngineTime(const std::vector<RunSummary>& runs);

/// Rows of `table`: column 1 the category index (from 0), then one column per run ("n/a" for
/// kNotMeasured).
std::string BarData(const BarTable& table);

}  // namespace spillway
