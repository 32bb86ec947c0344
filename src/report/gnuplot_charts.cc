#include "report/gnuplot_charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/check.h"
#include "report/chart_data.h"
#include "report/gnuplot_parts.h"

namespace spillway {
namespace {

using gnuplot::AxisTop;
using gnuplot::Header;
using gnuplot::kHeightPx;
using gnuplot::kWidthPx;
using gnuplot::RunStyle;
constexpr int kPanelHeightPx = 230;

// What every chart shares: the runs, their data files, the marks for the phases.
struct Context {
  const std::vector<RunSummary>& runs;
  const std::vector<std::string>& labels;
  std::vector<std::size_t> with_series;  ///< runs with a non-empty time series
  double t_max_s = 0;
  std::string phase_marks;
};

std::string RunData(std::size_t i) { return fmt::format("gnuplot/run{}.dat", i); }

// Shading and labels for the phases, when every run has the same ones: phases above the
// lowest rate (the bursts) are shaded, every phase is labelled with its offered rate.
std::string PhaseMarks(const std::vector<RunSummary>& runs) {
  const std::vector<PhaseSummary>& phases = runs.front().phases;
  for (const RunSummary& r : runs) {
    if (r.phases.size() != phases.size()) {
      return "";
    }
    for (std::size_t i = 0; i < phases.size(); ++i) {
      if (r.phases[i].start_s != phases[i].start_s || r.phases[i].end_s != phases[i].end_s) {
        return "";
      }
    }
  }
  double lowest = INFINITY;
  for (const PhaseSummary& p : phases) {
    lowest = std::min(lowest, p.offered_rate_rps);
  }
  std::string out;
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const PhaseSummary& p = phases[i];
    if (p.offered_rate_rps > lowest) {
      out += fmt::format(
          "set object {} rect from {}, graph 0 to {}, graph 1 behind fc rgb '#f6ead3' "
          "fs solid 1.0 noborder\n",
          i + 1, p.start_s, p.end_s);
    }
    out +=
        fmt::format("set label {} {} at {}, graph 0.96 center tc rgb '#666666' font ',10' front\n",
                    i + 1, GnuplotQuote(fmt::format("{:g} req/s offered", p.offered_rate_rps)),
                    (p.start_s + p.end_s) / 2);
  }
  return out;
}

std::string TimeAxis(const Context& c) {
  return fmt::format("set xlabel 'time since start (s)'\nset xrange [0:{}]\n", c.t_max_s) +
         c.phase_marks;
}

// One line per run of column `column` (of the run's data file) against `x_column`.
std::string OverlayPlot(const Context& c, int x_column, int column) {
  std::string out = "plot ";
  for (std::size_t k = 0; k < c.with_series.size(); ++k) {
    const std::size_t i = c.with_series[k];
    out += fmt::format("{}{} using {}:{} with lines {} title {}", k > 0 ? ", \\\n     " : "",
                       GnuplotQuote(RunData(i)), x_column, column, RunStyle(i),
                       GnuplotQuote(c.labels[i]));
  }
  return out + "\n";
}

template <typename Value>
double MaxOver(const Context& c, Value value) {
  double max = 0;
  for (const std::size_t i : c.with_series) {
    for (const TimeseriesPoint& p : c.runs[i].timeseries) {
      max = std::max(max, static_cast<double>(value(p)));
    }
  }
  return max;
}

ChartSpec GoodputChart(const Context& c, std::string* script) {
  ChartSpec spec{"goodput.svg", "Goodput per second",
                 "Requests completed within every SLO, by the second they completed in. Look at "
                 "the burst (shaded when the runs share phases): the better policy keeps this "
                 "near what the engine can serve.",
                 kWidthPx, kHeightPx};
  *script += Header(spec.svg, spec.width_px, spec.height_px) + TimeAxis(c) +
             fmt::format(
                 "set title {}\nset ylabel 'good completions per second'\n"
                 "set yrange [0:{}]\n",
                 GnuplotQuote(spec.title),
                 AxisTop(MaxOver(c, [](const TimeseriesPoint& p) { return p.good; }))) +
             OverlayPlot(c, 1, 5);
  return spec;
}

ChartSpec TrafficChart(const Context& c, std::string* script) {
  const int n = static_cast<int>(c.with_series.size());
  ChartSpec spec{"traffic.svg", "Offered, admitted and good per second (one panel per run)",
                 "Per run: attempts sent (retries included; the retries alone dashed, when "
                 "a run has any), attempts admitted to the engine's queue, completions within "
                 "every SLO. Offered minus admitted was refused at the door; admitted minus "
                 "good is work that did not pay off.",
                 kWidthPx, 60 + kPanelHeightPx * n};
  const double top = AxisTop(MaxOver(c, [](const TimeseriesPoint& p) {
    return std::max({p.offered, p.admitted, p.good});
  }));
  *script += Header(spec.svg, spec.width_px, spec.height_px) + TimeAxis(c) +
             fmt::format(
                 "set yrange [0:{}]\nset ylabel 'requests per second'\n"
                 "set multiplot layout {},1 title {}\n",
                 top, n, GnuplotQuote(spec.title));
  for (int k = 0; k < n; ++k) {
    const std::size_t i = c.with_series[static_cast<std::size_t>(k)];
    const std::string data = GnuplotQuote(RunData(i));
    *script += fmt::format(
        "set title {}\n{}"
        "plot {} using 1:3 with lines lc rgb '#9a9a9a' lw 1.5 title 'offered', \\\n"
        "     {} using 1:4 with lines lc rgb '#0072B2' lw 1.5 title 'admitted', \\\n"
        "     {} using 1:5 with lines lc rgb '#009E73' lw 2 title 'good'{}\n",
        GnuplotQuote(c.labels[i]),
        k + 1 < n ? "unset xlabel\n" : "set xlabel 'time since start (s)'\n", data, data, data,
        c.runs[i].retries > 0
            ? fmt::format(", \\\n     {} using 1:11 with lines lc rgb '#D55E00' lw 1.5 dt 2 "
                          "title 'retries'",
                          data)
            : std::string());
  }
  *script += "unset multiplot\n";
  return spec;
}

ChartSpec WaitingChart(const Context& c, std::string* script) {
  ChartSpec spec{"waiting.svg", "Waiting requests",
                 "Requests in the engine's waiting queue at the end of each second (summed over "
                 "replicas). A queue longer than the engine drains within the TTFT SLO holds "
                 "requests that will miss it.",
                 kWidthPx, kHeightPx};
  *script += Header(spec.svg, spec.width_px, spec.height_px) + TimeAxis(c) +
             fmt::format("set title {}\nset ylabel 'requests waiting'\nset yrange [0:{}]\n",
                         GnuplotQuote(spec.title),
                         AxisTop(MaxOver(c, [](const TimeseriesPoint& p) { return p.waiting; }))) +
             OverlayPlot(c, 2, 8);
  return spec;
}

ChartSpec KvChart(const Context& c, std::string* script) {
  ChartSpec spec{"kv_usage.svg", "KV cache usage",
                 "Share of KV cache blocks in use at the end of each second (averaged over "
                 "replicas). Near 100% new requests wait for blocks and running ones get "
                 "preempted.",
                 kWidthPx, kHeightPx};
  const double top = std::min(
      100.0, AxisTop(MaxOver(c, [](const TimeseriesPoint& p) { return p.kv_usage; }) * 100));
  *script += Header(spec.svg, spec.width_px, spec.height_px) + TimeAxis(c) +
             fmt::format("set title {}\nset ylabel 'KV blocks in use (%)'\nset yrange [0:{}]\n",
                         GnuplotQuote(spec.title), top) +
             OverlayPlot(c, 2, 10);
  return spec;
}

}  // namespace

std::string GnuplotQuote(std::string_view text) {
  std::string out = "'";
  for (const char ch : text) {
    if (ch == '\'') {
      out += "''";
    } else if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out + "'";
}

GnuplotJob BuildGnuplotJob(const std::vector<RunSummary>& runs,
                           const std::vector<std::string>& labels) {
  SPILLWAY_CHECK(!runs.empty() && runs.size() == labels.size());
  GnuplotJob job;
  job.script = "gnuplot/charts.gp";
  std::string script =
      "# Draws the charts of a Spillway report; run from the report directory:\n"
      "#   gnuplot gnuplot/charts.gp\n";
  Context c{runs, labels, {}, 0, PhaseMarks(runs)};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].timeseries.empty()) {
      c.with_series.push_back(i);
      c.t_max_s = std::max(c.t_max_s, runs[i].timeseries.back().t + 1);
      job.files.emplace_back(RunData(i), TimeseriesData(runs[i], labels[i]));
    }
  }
  if (c.with_series.empty()) {
    job.notes.push_back("No run has a per-second time series: the time charts are left out.");
  } else {
    for (auto* chart : {GoodputChart, TrafficChart, WaitingChart, KvChart}) {
      job.charts.push_back(chart(c, &script));
    }
  }
  gnuplot::AddDistributionCharts(runs, labels, &job, &script);
  job.files.emplace_back(job.script, script);
  return job;
}

}  // namespace spillway
