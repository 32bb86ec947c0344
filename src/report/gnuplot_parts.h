#pragma once
// Pieces shared by the report's gnuplot chart builders (gnuplot_charts.cc for the time charts,
// gnuplot_distribution_charts.cc for the TTFT distribution and the bars). Internal to report/.

#include <cstddef>
#include <string>
#include <vector>

#include "report/gnuplot_charts.h"
#include "report/run_summary.h"

namespace spillway::gnuplot {

inline constexpr int kWidthPx = 900;
inline constexpr int kHeightPx = 360;

/// Starts a chart: resets gnuplot's settings and opens `svg` (width x height px) with the
/// shared look: white background, grid, legend outside on the right, no enhanced text.
std::string Header(const std::string& svg, int width_px, int height_px);

/// Line or bar colour of run `i`: the same in every chart. lc and dt (dashes after the 7th
/// run) for lines; lc only for bars (`dashed = false`).
std::string RunStyle(std::size_t i, bool dashed = true);

/// Upper end of a y axis from 0 that shows `max` with some headroom (1 when max is 0).
double AxisTop(double max);

/// Appends the TTFT distribution, TTFT forecast calibration, shed-by-reason and engine-time
/// charts (with their data files) to `job` and their commands to `script`.
void AddDistributionCharts(const std::vector<RunSummary>& runs,
                           const std::vector<std::string>& labels, GnuplotJob* job,
                           std::string* script);

}  // namespace spillway::gnuplot
