// `spillway bench`: the open-loop HTTP load generator over a scenario file (docs/bench.md).

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include "cli_checks.h"
#include "gpu_price.h"

#include "commands.h"
#include "config/config_error.h"
#include "invocation.h"
#include "loadgen/bench_runner.h"
#include "loadgen/request_labels.h"
#include "output_file.h"
#include "report/summary_json.h"
#include "report/table.h"
#include "workload/scenario.h"

namespace spillway::app {
namespace {

struct BenchArgs {
  loadgen::BenchOptions options;
  std::string scenario;
  std::string json_out;
  std::string records_out;
  std::string timeseries_out;
  std::vector<std::string> tenant_keys;  ///< --api-key-for TENANT=KEY, as given
  CLI::Option* seed_option = nullptr;
  double rate_multiplier = 0;
  double time_scale = 0;
  double duration_limit_s = 0;
  std::optional<double> gpu_hour_usd;
  bool no_metrics = false;
  bool no_progress = false;
};

// The engine-time rows the server's /metrics did not have, or did not answer for after the run
// (printed n/a), as "; ..." or "".
std::string NotExported(const RunSummary& s) {
  std::string missing;
  for (const auto& [row, value] :
       {std::pair{"engine busy s", &s.engine_busy_s},
        std::pair{"wasted engine s", &s.wasted_engine_s},
        std::pair{"engine s on not-completed", &s.not_completed_engine_s}}) {
    if (!value->has_value()) {
      missing += fmt::format("{}{}", missing.empty() ? "" : ", ", row);
    }
  }
  return missing.empty() ? ""
                         : "; not exported there or not answered after the run, so n/a: " + missing;
}

std::string ClientLines(const loadgen::BenchResult& r) {
  std::string out = fmt::format(
      "\nclient: transport errors {}, peak in flight {}, send lag vs schedule p50 {:.1f} ms, "
      "p99 {:.1f} ms, max {:.1f} ms\n",
      r.transport_errors, r.max_in_flight, r.send_lag_s.p50 * 1e3, r.send_lag_s.p99 * 1e3,
      r.send_lag_s.max * 1e3);
  out += r.metrics_scraped ? "server: waiting, running, KV usage, preemptions and engine seconds "
                             "from its /metrics" +
                                 NotExported(r.summary) + "\n"
                           : "server: no vLLM/Spillway metrics read from /metrics: waiting, "
                             "running, KV usage and preemptions are 0, engine seconds n/a\n";
  if (const RetryAfterSummary& ra = r.summary.retry_after; ra.checked > 0) {
    out += fmt::format(
        "Retry-After: {} answers checked against the queue's drain time (estimated), {} short by "
        "more than {:g} s, worst shortfall {:.2f} s, longest drain {:.2f} s\n",
        ra.checked, ra.shortfalls, ra.tolerance_s, ra.max_shortfall_s, ra.max_drain_s);
  }
  if (r.interrupted) {
    out += "interrupted: the summary covers the run until Ctrl-C\n";
  }
  return out;
}

int RunBenchCommand(BenchArgs& a) {
  Scenario sc = LoadScenario(a.scenario);
  if (a.rate_multiplier > 0 || a.time_scale > 0) {
    if (sc.arrival.kind != ArrivalProcess::Kind::kTrace) {
      std::cerr << "spillway bench: --rate-multiplier and --time-scale apply to trace scenarios\n";
      return 2;
    }
    if (a.rate_multiplier > 0) {
      sc.arrival.rate_multiplier = a.rate_multiplier;
    }
    if (a.time_scale > 0) {
      sc.arrival.time_scale = a.time_scale;
    }
  }
  loadgen::BenchOptions& o = a.options;
  for (const std::string& spec : a.tenant_keys) {
    loadgen::AddTenantKey(spec, &o.api_keys_by_tenant);
  }
  o.seed = a.seed_option->count() > 0 ? o.seed : sc.seed;
  o.duration_limit_s = a.duration_limit_s > 0 ? a.duration_limit_s : kNever;
  o.scrape_metrics = !a.no_metrics;
  o.progress = !a.no_progress && ::isatty(STDERR_FILENO) == 1;
  const std::vector<std::pair<const char*, std::string>> outputs = {
      {"--json", a.json_out}, {"--records", a.records_out}, {"--timeseries", a.timeseries_out}};
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    for (std::size_t j = i + 1; j < outputs.size(); ++j) {
      if (OutputFile::SameFile(outputs[i].second, outputs[j].second)) {
        std::cerr << "spillway bench: " << outputs[i].first << " and " << outputs[j].first
                  << " name the same file (" << outputs[i].second << ")\n";
        return 2;
      }
    }
  }
  // Each replaces its file only when the run succeeds (an earlier run's output survives).
  OutputFile json(a.json_out, "--json");
  OutputFile records(a.records_out, "--records");
  OutputFile timeseries(a.timeseries_out, "--timeseries");
  o.records = records.stream();
  o.timeseries = timeseries.stream();
  const std::string started_at = UtcNow();
  loadgen::BenchResult r = loadgen::RunBench(sc, o);
  r.summary.gpu_hour_usd = a.gpu_hour_usd;
  r.summary.command = Invocation();
  r.summary.started_at = started_at;
  std::cout << fmt::format(
      "scenario {} ({}), seed {}, against {} (model {}), open loop over HTTP\n\n", sc.name, sc.file,
      o.seed, o.target_url, r.model);
  std::cout << CompareTable({r.summary});
  std::cout << ClientLines(r);
  records.Commit();
  timeseries.Commit();
  if (std::ofstream* out = json.stream()) {
    *out << SummaryToJson(r.summary);
    json.Commit();
    std::cout << "\nsummary written to " << a.json_out << "\n";
  }
  return 0;
}

void AddOptions(CLI::App* cmd, BenchArgs* a) {
  loadgen::BenchOptions& o = a->options;
  cmd->add_option("--target", o.target_url, "Server base URL, e.g. http://127.0.0.1:8000")
      ->required();
  cmd->add_option("--scenario", a->scenario, "Scenario YAML file (the same as `spillway sim`)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--policy-label", o.policy_label, "Name of this run in the table and JSON")
      ->capture_default_str();
  cmd->add_option("--json", a->json_out, "Write the run summary JSON here")->check(kNonEmptyPath);
  cmd->add_option("--records", a->records_out, "Write one JSON line per attempt here")
      ->check(kNonEmptyPath);
  cmd->add_option("--timeseries", a->timeseries_out,
                  "Write one JSON line per second here (with in-flight requests)")
      ->check(kNonEmptyPath);
  a->seed_option = cmd->add_option("--seed", o.seed, "Random seed (default: the scenario's)")
                       ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1} << 62));
  cmd->add_option("--model", o.model, "Model name (default: the first of GET /v1/models)");
  cmd->add_option("--api-key", o.api_key, "Sent as Authorization: Bearer KEY");
  cmd->add_option("--api-key-for", a->tenant_keys,
                  "TENANT=KEY: requests of the scenario classes with this tenant use this key "
                  "instead of --api-key (repeatable)");
  cmd->add_option("--rate-multiplier", a->rate_multiplier,
                  "Trace replay: send each trace request this many times on average")
      ->check(FiniteIn(0.0, 100.0, /*lo_open=*/true));
  cmd->add_option("--time-scale", a->time_scale,
                  "Trace replay: multiply trace timestamps (0.5 = twice as fast)")
      ->check(FiniteIn(0.0, 1e6, /*lo_open=*/true));
  AddGpuPriceOptions(cmd, &a->gpu_hour_usd);
  cmd->add_option("--duration-limit-s", a->duration_limit_s,
                  "Send only the arrivals of the first S seconds")
      ->check(kFinitePositive);
  cmd->add_option("--max-request-s", o.max_request_s,
                  "Give up on an attempt after S seconds when the scenario sets no timeout")
      ->check(kFinitePositive)
      ->capture_default_str();
  cmd->add_option("--max-in-flight", o.max_in_flight,
                  "Attempts in flight at most (0: the open-file limit); over it an attempt "
                  "is not sent and counts as a transport error")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 24));
  cmd->add_flag("--no-metrics", a->no_metrics, "Do not scrape the server's /metrics");
  cmd->add_flag("--no-progress", a->no_progress, "No progress line, even on a terminal");
}

}  // namespace

void AddBenchCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Run a scenario open loop against an OpenAI-compatible server over HTTP");
  AddOptions(cmd, args.get());
  cmd->callback([args, exit_code] {
    try {
      *exit_code = RunBenchCommand(*args);
    } catch (const config::ConfigError& e) {
      std::cerr << "spillway bench: " << e.what() << "\n";
      *exit_code = 2;
    } catch (const std::invalid_argument& e) {
      std::cerr << "spillway bench: " << e.what() << "\n";
      *exit_code = 2;
    } catch (const std::exception& e) {
      std::cerr << "spillway bench: error: " << e.what() << "\n";
      *exit_code = 1;
    }
  });
}

}  // namespace spillway::app
