#pragma once
// The report's page: one HTML file with inline CSS and no script, that shows the runs, the
// comparison table and the charts (SVG files beside it). Opens from disk; fetches nothing.

#include <string>
#include <string_view>
#include <vector>

#include "core/html_escape.h"
#include "report/gnuplot_charts.h"
#include "report/run_summary.h"

namespace spillway {

/// The page for `runs` (labels and input files: one per run, in order): title; a table of the
/// runs (label in the run's chart colour, policy, scenario, profile, source, seed, replicas,
/// cancellation propagation, SLOs, input file); the CompareRows table side by side; each chart
/// of `job` as <img src="SVG"> with its title and caption; `job.notes`. Every text taken from
/// the runs is HTML-escaped. Deterministic: no date, no absolute path that was not given.
std::string BuildHtmlPage(const std::vector<RunSummary>& runs,
                          const std::vector<std::string>& labels,
                          const std::vector<std::string>& files, const GnuplotJob& job);

}  // namespace spillway
