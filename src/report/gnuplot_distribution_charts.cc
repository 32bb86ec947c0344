// The report's charts that are not over time: the TTFT distribution and the bar charts.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "report/chart_data.h"
#include "report/gnuplot_parts.h"

namespace spillway::gnuplot {
namespace {

std::string TtftData(std::size_t i) { return fmt::format("gnuplot/ttft{}.dat", i); }

// Tics at 1, 2 and 5 of each decade within [lo, hi]: "set xtics (0.01, 0.02, 0.05, ...)".
std::string LogTics(double lo, double hi) {
  std::string tics;
  for (double decade = 1e-3; decade <= 100; decade *= 10) {
    for (const double m : {1.0, 2.0, 5.0}) {
      const double v = m * decade;
      if (v >= lo * 0.999 && v <= hi * 1.001) {
        tics += fmt::format("{}{:g}", tics.empty() ? "" : ", ", v);
      }
    }
  }
  return tics.empty() ? "" : "set xtics (" + tics + ")\n";
}

// A dashed red vertical line at each TTFT SLO the runs had.
std::string SloMarks(const std::set<double>& slos) {
  std::string out;
  int tag = 1;
  for (const double slo : slos) {
    out += fmt::format(
        "set arrow {} from {}, graph 0 to {}, graph 1 nohead dt 2 lw 1.5 lc rgb '#cc0000' "
        "front\n"
        "set label {} {} at {}, graph 0.06 left offset 0.5,0 tc rgb '#cc0000' front\n",
        tag, slo, slo, tag, GnuplotQuote(fmt::format("TTFT SLO {:g} s", slo)), slo);
    ++tag;
  }
  return out;
}

// The TTFT CDF of every run that has one, each extended flat to the common right end so the
// plateaus line up; the x range covers the curves and the SLO lines.
struct TtftCurves {
  std::vector<std::pair<std::size_t, std::vector<std::pair<double, double>>>> curves;
  std::set<double> slos;
  double x_min = INFINITY;
  double x_max = 0;
};

TtftCurves CollectTtftCurves(const std::vector<RunSummary>& runs,
                             const std::vector<std::string>& labels, GnuplotJob* job) {
  TtftCurves t;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    auto points = CdfPoints(runs[i].ttft_histogram_s);
    if (points.empty()) {
      job->notes.push_back(fmt::format(
          "TTFT distribution: run '{}' has no ttft_histogram_s samples (nothing served, or "
          "JSON from before the key existed).",
          labels[i]));
      continue;
    }
    t.x_min = std::min(t.x_min, points.front().first);
    t.x_max = std::max(t.x_max, points.back().first);
    if (runs[i].slo.ttft_s && *runs[i].slo.ttft_s > 0) {
      t.slos.insert(*runs[i].slo.ttft_s);
    }
    t.curves.emplace_back(i, std::move(points));
  }
  for (const double slo : t.slos) {  // keep the SLO lines inside the plot
    t.x_min = std::min(t.x_min, slo / 1.6);
    t.x_max = std::max(t.x_max, slo * 1.6);
  }
  t.x_max *= 1.25;
  for (auto& [i, points] : t.curves) {
    points.emplace_back(t.x_max, points.back().second);
  }
  return t;
}

void AddTtftChart(const std::vector<RunSummary>& runs, const std::vector<std::string>& labels,
                  GnuplotJob* job, std::string* script) {
  const TtftCurves t = CollectTtftCurves(runs, labels, job);
  if (t.curves.empty()) {
    return;
  }
  const ChartSpec spec{"ttft_cdf.svg", "Time to first token: cumulative distribution",
                       "Share of the requests that got a first token which got it within x "
                       "seconds (log scale; from ttft_histogram_s). The higher a curve crosses "
                       "the dashed SLO line, the more requests met the TTFT SLO.",
                       kWidthPx, kHeightPx};
  *script += Header(spec.svg, spec.width_px, spec.height_px) +
             fmt::format(
                 "set title {}\nset logscale x 10\nset format x '%g'\nset xrange [{}:{}]\n"
                 "set yrange [0:1]\nset ytics 0.1\nset grid xtics ytics lc rgb '#e0e0e0'\n"
                 "set xlabel 'time to first token (s)'\n"
                 "set ylabel 'share of served requests'\nset key left top inside\n",
                 GnuplotQuote(spec.title), t.x_min, t.x_max) +
             LogTics(t.x_min, t.x_max) + SloMarks(t.slos) + "plot ";
  for (std::size_t k = 0; k < t.curves.size(); ++k) {
    const auto& [i, points] = t.curves[k];
    job->files.emplace_back(TtftData(i), PointsData(points));
    *script += fmt::format("{}{} using 1:2 with lines {} title {}", k > 0 ? ", \\\n     " : "",
                           GnuplotQuote(TtftData(i)), RunStyle(i), GnuplotQuote(labels[i]));
  }
  *script += "\n";
  job->charts.push_back(spec);
}

// Clustered bars: one cluster per category of `table`, one bar per run, values printed above
// the bars with `value_format` (a gnuplot sprintf format), "n/a" where a run has kNotMeasured.
void AddBarChart(const ChartSpec& spec, const std::string& data_file, const BarTable& table,
                 const std::vector<std::string>& legend, const char* value_format,
                 const char* ylabel, GnuplotJob* job, std::string* script) {
  const std::size_t n = legend.size();
  const double width = 0.8 / static_cast<double>(n);
  double max = 0;
  std::string tics;
  for (std::size_t c = 0; c < table.categories.size(); ++c) {
    tics += fmt::format("{}{} {}", c > 0 ? ", " : "", GnuplotQuote(table.categories[c]), c);
    for (const double v : table.values[c]) {
      max = std::isnan(v) ? max : std::max(max, v);  // NaN: not measured, no bar
    }
  }
  *script += Header(spec.svg, spec.width_px, spec.height_px) +
             fmt::format(
                 "set title {}\nset ylabel {}\nset style fill solid 0.9 noborder\n"
                 "set boxwidth {} absolute\nset xrange [-0.6:{}]\nset yrange [0:{}]\n"
                 "set xtics ({}) scale 0{}\nset key below\nplot ",
                 GnuplotQuote(spec.title), GnuplotQuote(ylabel), width,
                 static_cast<double>(table.categories.size()) - 0.4, AxisTop(max), tics,
                 table.categories.size() > 3 ? " rotate by -20" : "");
  const std::string data = GnuplotQuote(data_file);
  for (std::size_t i = 0; i < n; ++i) {
    const double offset = (static_cast<double>(i) - static_cast<double>(n - 1) / 2) * width;
    // A value the run did not measure is "n/a" in the data (BarData): no bar, "n/a" at 0.
    const std::size_t k = i + 2;
    *script += fmt::format(
        "{}{} using ($1+{}):{} with boxes {} title {}, \\\n"
        "     {} using ($1+{}):(valid({}) ? column({}) : 0):(valid({}) ? sprintf('{}', "
        "column({})) : 'n/a') with labels offset 0,0.6 font ',10' notitle",
        i > 0 ? ", \\\n     " : "", data, offset, k, RunStyle(i, false), GnuplotQuote(legend[i]),
        data, offset, k, k, k, value_format, k);
  }
  *script += "\n";
  job->files.emplace_back(data_file, BarData(table));
  job->charts.push_back(spec);
}

// Predicted against actual TTFT (RunSummary::ttft_calibration) for the runs that predicted
// (none: no chart):
// per bin of the prediction, the mean of what the requests got (solid) and its p95 (dashed),
// against the diagonal a calibrated prediction follows.
void AddCalibrationChart(const std::vector<RunSummary>& runs,
                         const std::vector<std::string>& labels, GnuplotJob* job,
                         std::string* script) {
  double top = 0;
  std::string plots;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& bins = runs[i].ttft_calibration;
    if (bins.empty()) {
      continue;
    }
    std::string data;
    for (const TtftCalibrationBin& b : bins) {
      const double center = b.predicted_lo_s + kTtftCalibrationBinS / 2;
      data += fmt::format("{} {} {} {}\n", center, b.actual_mean_s, b.actual_p95_s, b.count);
      top = std::max({top, center + kTtftCalibrationBinS / 2, b.actual_p95_s});
    }
    const std::string file = fmt::format("gnuplot/calibration{}.dat", i);
    job->files.emplace_back(file, data);
    plots += fmt::format(
        "{}{} using 1:2 with linespoints {} title {}, \\\n     {} using 1:3 with lines {} dt 2 "
        "title {}",
        plots.empty() ? "" : ", \\\n     ", GnuplotQuote(file), RunStyle(i, false),
        GnuplotQuote(labels[i] + ": actual mean"), GnuplotQuote(file), RunStyle(i, false),
        GnuplotQuote(labels[i] + ": actual p95"));
  }
  if (plots.empty()) {
    return;  // no run predicted: nothing to calibrate (no note, most runs do not)
  }
  const ChartSpec spec{
      "ttft_calibration.svg", "TTFT forecast calibration",
      "Requests admitted with a TTFT forecast (the forecast policy, simulated or "
      "live, or sim --predict-ttft), binned by their forecast: the mean (solid) and p95 "
      "(dashed) of the TTFT they got. On the grey diagonal the forecast is "
      "exact; above it, optimistic (the margin covers the gap).",
      kWidthPx, kHeightPx};
  top = AxisTop(top);
  *script += Header(spec.svg, spec.width_px, spec.height_px) +
             fmt::format(
                 "set title {}\nset xrange [0:{}]\nset yrange [0:{}]\n"
                 "set xlabel 'forecast TTFT (s)'\nset ylabel 'actual TTFT (s)'\n"
                 "set key left top inside\nplot x with lines lc rgb '#999999' title "
                 "'forecast = actual', \\\n     ",
                 GnuplotQuote(spec.title), top, top) +
             plots + "\n";
  job->charts.push_back(spec);
}

}  // namespace

void AddDistributionCharts(const std::vector<RunSummary>& runs,
                           const std::vector<std::string>& labels, GnuplotJob* job,
                           std::string* script) {
  AddTtftChart(runs, labels, job, script);
  AddCalibrationChart(runs, labels, job, script);
  const BarTable shed = ShedByReason(runs);
  if (shed.categories.empty()) {
    job->notes.push_back("Shed by reason: no run refused or dropped a request.");
  } else {
    AddBarChart({"shed.svg", "Requests shed, by reason",
                 "Refused at the door by X-Overload-Reason, and admitted requests dropped at "
                 "the queue head after their deadline. Refusing at the door costs no engine "
                 "time; dropping after a wait costs the client that wait.",
                 kWidthPx, kHeightPx},
                "gnuplot/shed.dat", shed, labels, "%.0f", "requests", job, script);
  }
  std::vector<std::string> legend;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    legend.push_back(
        runs[i].engine_busy_s.has_value()
            ? fmt::format("{} (engine busy {:.1f} s)", labels[i], *runs[i].engine_busy_s)
            : fmt::format("{} (engine time not measured)", labels[i]));
  }
  AddBarChart({"engine_time.svg", "Engine time that produced nothing",
               "Engine seconds spent on requests whose client had already gone (wasted) and on "
               "requests that never completed for their client (includes the wasted). Both "
               "are GPU time lost to goodput. A run that did not measure one (a bench run "
               "against a server that does not export it) reads n/a there, with no bar.",
               kWidthPx, kHeightPx},
              "gnuplot/engine_time.dat", EngineTime(runs), legend, "%.1f", "engine seconds", job,
              script);
}

}  // namespace spillway::gnuplot
