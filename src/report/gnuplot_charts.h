#pragma once
// The report's charts as gnuplot input: data files plus one script that draws every chart as
// an SVG file (gnuplot's svg terminal). Pure: builds text, runs nothing; `spillway report`
// writes the files and runs gnuplot.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/run_summary.h"

namespace spillway {

/// One chart of the report.
struct ChartSpec {
  std::string svg;      ///< file name in the output directory, e.g. "waiting.svg"
  std::string title;    ///< e.g. "Waiting requests"
  std::string caption;  ///< one line: what the chart shows and what to look at
  int width_px = 0;     ///< the SVG's size
  int height_px = 0;
};

/// Everything gnuplot needs for a report. Paths are relative to the output directory: the
/// script and its data live in gnuplot/, the SVGs in the directory itself, so gnuplot runs
/// there (`cd DIR && gnuplot gnuplot/charts.gp` redraws them).
struct GnuplotJob {
  std::vector<ChartSpec> charts;                           ///< in page order
  std::vector<std::string> notes;                          ///< charts left out, and why
  std::vector<std::pair<std::string, std::string>> files;  ///< path -> content, script included
  std::string script;                                      ///< the script's path among `files`
};

/// The charts comparing `runs`, labelled `labels` (same size, not empty): good completions per
/// second (runs overlaid); offered, admitted and good per second (one panel per run); waiting
/// depth; KV usage; the TTFT distribution (from `ttft_histogram_s`, with the TTFT SLO); shed by
/// reason (bars); wasted engine seconds (bars). Each run keeps its colour in every chart;
/// phases shared by all runs are marked (rates above the lowest shaded). Charts whose data no
/// run has are left out with a note.
GnuplotJob BuildGnuplotJob(const std::vector<RunSummary>& runs,
                           const std::vector<std::string>& labels);

/// The colour of run `i` (by position) in every chart, as "#RRGGBB".
std::string RunColour(std::size_t i);

/// `text` as a gnuplot single-quoted string: quotes doubled, control characters as spaces
/// (the script sets `noenhanced`, so no other character is special).
std::string GnuplotQuote(std::string_view text);

}  // namespace spillway
