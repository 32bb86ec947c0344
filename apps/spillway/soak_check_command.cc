// `spillway soak-check`: the verdict of a soak run (scripts/soak.sh, docs/soak.md) from the
// files it left: the bench --records, the sampled RSS, the last /metrics scrape, and what the
// script saw of the server at the end. The logic is report/soak_check.h.

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>
#include <boost/json.hpp>
#include "cli_checks.h"

#include "commands.h"
#include "output_file.h"
#include "report/soak_check.h"
#include "report/summary_reader.h"

namespace spillway::app {
namespace {

struct SoakCheckArgs {
  std::string records;
  std::string samples;
  std::string metrics;
  std::string gnuplot_out;
  std::string summary;
  double max_broken_share = -1;  ///< < 0: not given (report only)
  std::string csv_name = "rss.csv";
  std::string svg_name = "rss.svg";
  SoakBounds bounds;
  double rss_growth_bound_mib = 4;
  ServerEnd server;
};

// The whole file; throws std::invalid_argument naming it when it cannot be read.
std::string ReadFileOrThrow(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  if (!in) {
    throw std::invalid_argument(std::string(what) + " " + path + ": cannot be read");
  }
  return out.str();
}

int RunSoakCheck(SoakCheckArgs& a) {
  a.bounds.rss_growth_bound_bytes = a.rss_growth_bound_mib * 1024 * 1024;
  // Opened first, so an unwritable path fails before any work (exit 2, like a bad input).
  std::optional<OutputFile> gnuplot;
  try {
    gnuplot.emplace(a.gnuplot_out, "--gnuplot");
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(e.what());
  }
  std::vector<ReplyCount> replies;
  try {
    replies = TallyReplies(ReadFileOrThrow(a.records, "--records"));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(a.records + ": " + e.what());
  }
  std::vector<ProcessSampleRow> samples;
  try {
    samples = ParseProcessSamples(ReadFileOrThrow(a.samples, "--samples"));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(a.samples + ": " + e.what());
  }
  std::optional<PromiseFigures> promises;  // read before anything is written
  if (!a.summary.empty()) {
    std::vector<RunSummary> runs;
    const std::string text = ReadFileOrThrow(a.summary, "--summary");
    try {
      runs = ParseRunSummaries(text, a.summary);
    } catch (const RunJsonError& e) {
      throw std::invalid_argument(e.what());
    }
    if (runs.size() != 1) {
      throw std::invalid_argument(a.summary + ": one run expected (bench --json), got " +
                                  std::to_string(runs.size()));
    }
    // The reader takes an absent count as 0 (summaries older than the key); here it is the
    // figure judged, so it must be there.
    const boost::json::value v = boost::json::parse(text);
    const boost::json::object& run = v.is_array() ? v.as_array().at(0).as_object() : v.as_object();
    if (!run.contains("dropped_at_queue_head")) {
      throw std::invalid_argument(a.summary +
                                  ": dropped_at_queue_head: missing (bench --json writes it)");
    }
    std::int64_t attempts = 0;
    for (const ReplyCount& r : replies) {
      attempts += r.count;
    }
    if (const std::string why = SummaryMismatch(runs.front(), attempts); !why.empty()) {
      throw std::invalid_argument(a.summary + ": " + why);
    }
    const std::optional<double> bound =
        a.max_broken_share >= 0 ? std::optional<double>(a.max_broken_share) : std::nullopt;
    promises = PromisesOf(runs.front(), bound);
  }
  ProcessFigures figures;
  if (!a.metrics.empty()) {
    figures = ReadProcessFigures(ReadFileOrThrow(a.metrics, "--metrics"));
  }
  const MemoryVerdict memory = CheckMemory(samples, a.bounds);
  if (std::ofstream* out = gnuplot->stream()) {
    *out << RssChartScript(a.csv_name, a.svg_name, memory, a.bounds);
    gnuplot->Commit();
  }
  SoakVerdict verdict = Judge(std::move(replies), memory, a.server, figures, a.bounds);
  if (promises.has_value()) {
    AddPromises(*promises, &verdict);
  }
  std::cout << FormatSoakReport(verdict, a.bounds);
  return verdict.passed() ? 0 : 1;
}

}  // namespace

void AddSoakCheckCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<SoakCheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "soak-check", "Judge a soak run (scripts/soak.sh): documented replies, flat memory, alive");
  cmd->add_option("--records", a->records, "The bench --records JSONL of the run")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--samples", a->samples,
                  "CSV of server samples: t_s,rss_bytes,open_fds (t from the load's start)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--duration-s", a->bounds.duration_s, "Length of the load (arrivals), s")
      ->required()
      ->check(kFinitePositive);
  cmd->add_option("--metrics", a->metrics, "The server's /metrics after the run (for process_*)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--health-status", a->server.health_status,
                  "HTTP status of GET /health after the run (0: no answer)")
      ->required()
      ->check(CLI::Range(0, 999));
  cmd->add_option("--server-exit-code", a->server.exit_code,
                  "The server's exit status after SIGTERM (128 + N: signal N)")
      ->required()
      ->check(CLI::Range(0, 255));
  cmd->add_option("--rss-growth-bound-mib", a->rss_growth_bound_mib,
                  "Fail when RSS grows by this much or more after warm-up, MiB")
      ->check(kFinitePositive)
      ->capture_default_str();
  cmd->add_option("--fd-slack", a->bounds.fd_slack,
                  "Open descriptors after the run may exceed those before by this many")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  CLI::Option* summary =
      cmd->add_option("--summary", a->summary,
                      "bench's --json run summary: report the admitted requests whose promise "
                      "broke (dropped at the queue head, abandoned, completed outside an SLO)")
          ->check(CLI::ExistingFile);
  cmd->add_option("--max-broken-share", a->max_broken_share,
                  "Fail when more than this share of the admitted broke their promise (0.01: "
                  "issue 14's goal under the forecast policy)")
      ->check(FiniteIn(0.0, 1.0, /*lo_open=*/false))
      ->needs(summary);
  cmd->add_option("--gnuplot", a->gnuplot_out,
                  "Write a gnuplot script here that draws the samples (run it in their directory)")
      ->check(kNonEmptyPath);
  cmd->add_option("--csv-name", a->csv_name, "The samples' file name as the script reads it")
      ->capture_default_str();
  cmd->add_option("--svg-name", a->svg_name, "The SVG the script writes")->capture_default_str();
  cmd->callback([a, exit_code] {
    try {
      *exit_code = RunSoakCheck(*a);
    } catch (const std::invalid_argument& e) {
      std::cerr << "spillway soak-check: " << e.what() << "\n";
      *exit_code = 2;
    } catch (const std::exception& e) {
      std::cerr << "spillway soak-check: error: " << e.what() << "\n";
      *exit_code = 1;
    }
  });
}

}  // namespace spillway::app
