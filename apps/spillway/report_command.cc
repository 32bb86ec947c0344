// `spillway report`: an HTML page with charts comparing run summaries (docs/report.md).

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "report/gnuplot_charts.h"
#include "report/html_page.h"
#include "report/run_labels.h"
#include "report/summary_reader.h"
#include "report/table.h"
#include "run_process.h"

namespace spillway::app {
namespace {

namespace fs = std::filesystem;

constexpr double kGnuplotTimeoutS = 120;

struct ReportArgs {
  std::vector<std::string> inputs;
  std::string out_dir;
  bool table = false;  // also print the side-by-side table to stdout
};

// The runs of every input, in order, and the file each came from.
struct LoadedRuns {
  std::vector<RunSummary> runs;
  std::vector<std::string> files;
};

LoadedRuns LoadRuns(const std::vector<std::string>& inputs) {
  LoadedRuns loaded;
  for (const std::string& path : inputs) {
    for (RunSummary& run : ReadRunSummaries(path)) {
      loaded.runs.push_back(std::move(run));
      loaded.files.push_back(path);
    }
  }
  return loaded;
}

void WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
  }
}

std::string ReadLog(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Draws the charts with gnuplot in `out`; returns an error message, empty on success.
std::string DrawCharts(const std::string& gnuplot, const GnuplotJob& job, const fs::path& out) {
  for (const auto& [name, text] : job.files) {
    WriteFile(out / name, text);
  }
  const fs::path log = out / "gnuplot" / "gnuplot.log";
  const ProcessResult r =
      RunProcess({gnuplot, job.script}, out.string(), log.string(), kGnuplotTimeoutS);
  const std::string said = ReadLog(log);
  if (!r.exited || r.exit_code != 0) {
    return fmt::format("gnuplot {} failed ({}):\n{}", (out / job.script).string(), r.description,
                       said);
  }
  if (!said.empty()) {
    std::cerr << "spillway report: gnuplot warned (" << log.string() << "):\n" << said;
  }
  for (const ChartSpec& c : job.charts) {
    std::error_code ec;
    if (fs::file_size(out / c.svg, ec) == 0 || ec) {
      return fmt::format("gnuplot wrote no {} (see {})", (out / c.svg).string(), log.string());
    }
  }
  return "";
}

int RunReport(const ReportArgs& a) {
  const LoadedRuns loaded = LoadRuns(a.inputs);  // bad input throws RunJsonError: exit 2
  const std::string gnuplot = FindExecutable("gnuplot");
  if (gnuplot.empty()) {
    std::cerr << "spillway report: gnuplot not found on PATH; install the Debian package "
                 "gnuplot-nox (scripts/deps.sh, `make deps`, installs it)\n";
    return 1;
  }
  if (a.table) {
    std::cout << CompareTable(loaded.runs) << "\n";
  }
  std::vector<LabelSource> sources;
  for (std::size_t i = 0; i < loaded.runs.size(); ++i) {
    sources.push_back({loaded.runs[i].policy, loaded.runs[i].scenario, loaded.files[i]});
  }
  const std::vector<std::string> labels = RunLabels(sources);
  const GnuplotJob job = BuildGnuplotJob(loaded.runs, labels);
  const fs::path out(a.out_dir);
  std::error_code ec;
  fs::create_directories(out / "gnuplot", ec);
  if (ec) {
    std::cerr << "spillway report: cannot create " << (out / "gnuplot").string() << ": "
              << ec.message() << "\n";
    return 1;
  }
  if (const std::string error = DrawCharts(gnuplot, job, out); !error.empty()) {
    std::cerr << "spillway report: " << error << "\n";
    return 1;
  }
  WriteFile(out / "index.html", BuildHtmlPage(loaded.runs, labels, loaded.files, job));
  std::cout << fmt::format("report of {} run(s), {} chart(s): {}\n", loaded.runs.size(),
                           job.charts.size(), (out / "index.html").string());
  return 0;
}

}  // namespace

void AddReportCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* report = app.add_subcommand(
      "report", "Write an HTML page with charts comparing run summaries (sim or bench JSON)");
  report
      ->add_option("runs", args->inputs,
                   "Run summary JSON files: each one run object or an array of them")
      ->required();
  report->add_option("--out", args->out_dir, "Output directory for index.html and the charts")
      ->required()
      ->check([](const std::string& s) {
        return s.empty() ? std::string("needs a directory") : std::string();
      });
  report->add_flag("--table", args->table,
                   "Also print the runs' side-by-side table (as `sim --compare`) to stdout");
  report->callback([args, exit_code] {
    try {
      *exit_code = RunReport(*args);
    } catch (const RunJsonError& e) {
      std::cerr << "spillway report: " << e.what() << "\n";
      *exit_code = 2;
    } catch (const std::exception& e) {
      std::cerr << "spillway report: error: " << e.what() << "\n";
      *exit_code = 1;
    }
  });
}

}  // namespace spillway::app
