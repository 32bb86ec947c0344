#include "report/html_page.h"

#include <fmt/format.h>

#include <set>

#include "core/check.h"
#include "report/table.h"

namespace spillway {
namespace {

constexpr std::string_view kStyle = R"css(
body { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
       color: #222; max-width: 1100px; margin: 24px auto; padding: 0 16px; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
h3 { font-size: 1.05em; margin: 0 0 0.3em; }
.sub, .note, figcaption, footer { color: #555; }
table { border-collapse: collapse; font-size: 0.92em; }
th, td { padding: 3px 10px; border-bottom: 1px solid #e6e6e6; text-align: left;
         white-space: nowrap; }
thead th { white-space: normal; vertical-align: bottom; }
td.wrap { white-space: normal; }
td.file { white-space: normal; word-break: break-all; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #f7f7f7; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; border-radius: 2px;
          vertical-align: -0.1em; margin-right: 0.4em; }
.pass { color: #1a7f37; } .fail { color: #c62828; font-weight: 600; }
figure { margin: 1.4em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.92em; margin-top: 0.3em; }
code { background: #f3f3f3; padding: 0 3px; }
)css";

std::string SloText(const GoodputSlo& slo) {
  std::string out;
  for (const auto& [name, value] : {std::pair{"TTFT", slo.ttft_s}, std::pair{"TPOT", slo.tpot_s},
                                    std::pair{"E2E", slo.e2e_s}}) {
    if (value) {
      out += fmt::format("{}{} {:g} s", out.empty() ? "" : ", ", name, *value);
    }
  }
  return out.empty() ? "-" : out;
}

std::string Swatch(std::size_t i) {
  return fmt::format("<span class=\"swatch\" style=\"background:{}\"></span>", RunColour(i));
}

std::string RunsTable(const std::vector<RunSummary>& runs, const std::vector<std::string>& labels,
                      const std::vector<std::string>& files) {
  std::string out =
      "<table class=\"runs\">\n<thead><tr><th>run</th><th>policy</th><th>scenario</th>"
      "<th>profile</th><th>source</th><th class=\"num\">seed</th><th class=\"num\">replicas</th>"
      "<th>cancellation propagation</th><th>SLOs</th><th>input file</th></tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunSummary& r = runs[i];
    out += fmt::format(
        "<tr><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td>{}</td><td class=\"wrap\">{}</td><td class=\"file\">{}</td>"
        "</tr>\n",
        Swatch(i), HtmlEscape(labels[i]), HtmlEscape(r.policy), HtmlEscape(r.scenario),
        HtmlEscape(r.profile), HtmlEscape(r.source), r.seed, r.replicas,
        !r.cancellation_propagation   ? "not known (measured from outside)"
        : *r.cancellation_propagation ? "on"
                                      : "off",
        HtmlEscape(SloText(r.slo)), HtmlEscape(files[i]));
  }
  return out + "</tbody>\n</table>\n";
}

std::string CellClass(const std::string& cell) {
  if (cell.rfind("FAIL", 0) == 0) {
    return "num fail";
  }
  return cell.rfind("pass", 0) == 0 ? "num pass" : "num";
}

std::string SummaryTable(const std::vector<RunSummary>& runs,
                         const std::vector<std::string>& labels) {
  std::string out = "<table class=\"summary\">\n<thead><tr><th></th>";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    out += fmt::format("<th class=\"num\">{}{}</th>", Swatch(i), HtmlEscape(labels[i]));
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const TableRow& row : CompareRows(runs)) {
    out += fmt::format("<tr><th>{}</th>", HtmlEscape(row.label));
    for (const std::string& cell : row.cells) {
      out += fmt::format("<td class=\"{}\">{}</td>", CellClass(cell), HtmlEscape(cell));
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string Charts(const GnuplotJob& job) {
  std::string out;
  for (const ChartSpec& c : job.charts) {
    out += fmt::format(
        "<figure>\n<h3>{}</h3>\n<a href=\"{}\"><img src=\"{}\" width=\"{}\" height=\"{}\" "
        "alt=\"{}\"></a>\n<figcaption>{}</figcaption>\n</figure>\n",
        HtmlEscape(c.title), HtmlEscape(c.svg), HtmlEscape(c.svg), c.width_px, c.height_px,
        HtmlEscape(c.title), HtmlEscape(c.caption));
  }
  for (const std::string& note : job.notes) {
    out += fmt::format("<p class=\"note\">{}</p>\n", HtmlEscape(note));
  }
  return out;
}

// "seed-burst" or "a, b" (each scenario once, in order of appearance).
std::string Scenarios(const std::vector<RunSummary>& runs) {
  std::set<std::string> seen;
  std::string out;
  for (const RunSummary& r : runs) {
    if (!r.scenario.empty() && seen.insert(r.scenario).second) {
      out += (out.empty() ? "" : ", ") + r.scenario;
    }
  }
  return out;
}

}  // namespace

std::string BuildHtmlPage(const std::vector<RunSummary>& runs,
                          const std::vector<std::string>& labels,
                          const std::vector<std::string>& files, const GnuplotJob& job) {
  SPILLWAY_CHECK(labels.size() == runs.size() && files.size() == runs.size());
  const std::string scenarios = Scenarios(runs);
  const std::string title = scenarios.empty() ? "Spillway report" : "Spillway report: " + scenarios;
  bool simulated = false;
  for (const RunSummary& r : runs) {
    simulated = simulated || r.source == "sim";
  }
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<h1>{}</h1>\n"
      "<p class=\"sub\">{} run(s) side by side. Rates are per second of the arrival span; "
      "times in seconds.</p>\n<h2>Runs</h2>\n",
      HtmlEscape(title), kStyle, HtmlEscape(title), runs.size());
  out += RunsTable(runs, labels, files);
  if (simulated) {
    out +=
        "<p class=\"note\">Source <code>sim</code>: the discrete-event simulator in virtual "
        "time over the emulated executor (a roofline cost model; no GPU ran).</p>\n";
  }
  out += "<h2>Summary</h2>\n" + SummaryTable(runs, labels) + "<h2>Charts</h2>\n" + Charts(job);
  return out +
         "<footer><p>Made by <code>spillway report</code>; the charts' data and gnuplot script "
         "are in <code>gnuplot/</code> beside this page.</p></footer>\n</body>\n</html>\n";
}

}  // namespace spillway
