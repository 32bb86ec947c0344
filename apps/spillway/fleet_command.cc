// `spillway fleet`: a fleet scenario live on this machine (docs/gateway.md, "A fleet, live"):
// N `spillway serve` emulated engines on loopback, `spillway gateway` in front of them, the
// scenario's load from `spillway bench`'s driver against the gateway, and the scenario's
// fleet faults injected on their schedule (kill: SIGKILL; drain: SIGTERM; stale_metrics: the
// engine's GET /metrics stalled for the window, serve's --fault-metrics-stall-on-sigusr1). The
// same scenario runs in virtual time with `spillway sim`; the summary has the same rows.

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include "admission/admission.h"
#include "cli_checks.h"

#include "child_process.h"
#include "commands.h"
#include "config/config_error.h"
#include "invocation.h"
#include "loadgen/bench_runner.h"
#include "metrics/prometheus_text.h"
#include "net/http_get.h"
#include "output_file.h"
#include "report/summary_json.h"
#include "report/table.h"
#include "workload/scenario.h"

namespace spillway::app {
namespace {

namespace asio = boost::asio;

struct FleetArgs {
  std::string scenario;
  std::int32_t replicas = 0;  // 0: the scenario's fleet.replicas, else 3
  std::string router;         // empty: the scenario's fleet.router, else gateway
  std::string policy;         // empty: the scenario's
  std::string policy_label;
  std::string json_out;
  std::string logs_dir;
  bool no_faults = false;
  bool no_progress = false;
};

/// One fault's signal at a time since the load started.
struct FaultAction {
  Seconds at_s = 0;
  std::size_t engine = 0;
  int signal = 0;
  std::string what;
};

std::vector<FaultAction> Schedule(const std::vector<FleetFault>& faults) {
  std::vector<FaultAction> out;
  for (const FleetFault& f : faults) {
    const auto e = static_cast<std::size_t>(f.endpoint);
    switch (f.kind) {
      case FleetFault::Kind::kKill:
        out.push_back({f.at_s, e, SIGKILL, fmt::format("engine {} killed (SIGKILL)", e)});
        break;
      case FleetFault::Kind::kDrain:
        out.push_back({f.at_s, e, SIGTERM, fmt::format("engine {} drained (SIGTERM)", e)});
        break;
      case FleetFault::Kind::kStaleMetrics:
        out.push_back({f.at_s, e, SIGUSR1, fmt::format("engine {} /metrics stalled", e)});
        out.push_back({f.until_s, e, SIGUSR1, fmt::format("engine {} /metrics answers again", e)});
        break;
      case FleetFault::Kind::kSlow:
        std::cerr << "spillway fleet: the slow fault is simulated only (spillway sim); skipped\n";
        break;
    }
  }
  std::sort(out.begin(), out.end(),
            [](const FaultAction& a, const FaultAction& b) { return a.at_s < b.at_s; });
  return out;
}

/// One line of what the gateway at `url` counted over the run (its /metrics at the end): its
/// ledger, what it sent to the engines and its own retries. Empty when it does not answer.
std::string GatewayLine(const std::string& url) {
  try {
    const net::Target target = net::ParseTarget(url);
    asio::io_context ioc;
    const net::GetResult r = net::HttpGetNow(net::Resolve(ioc, target), target, "/metrics", 2.0);
    if (r.status != 200) {
      return "";
    }
    const metrics::Exposition m = metrics::ParseExposition(r.body);
    auto n = [&m](std::string_view name) { return m.Sum(name).value_or(0); };
    return fmt::format(
        "gateway: received {:.0f} attempts, shed {:.0f} itself, forwarded {:.0f} to the engines "
        "({:.0f} of them its own retries, {:.0f} retries not sent); completed {:.0f}; failed "
        "{:.0f} (an engine's refusal passed on, an error or the deadline); cancelled by their "
        "clients {:.0f}\n",
        n("spillway_gateway_received_total"), n("spillway_gateway_shed_total"),
        n("spillway_gateway_forwarded_total"), n("spillway_gateway_retries_total"),
        n("spillway_gateway_retries_denied_total"), n("spillway_gateway_completed_total"),
        n("spillway_gateway_failed_total"), n("spillway_gateway_cancelled_total"));
  } catch (const std::exception&) {
    return "";
  }
}

/// The engines' pools: the scenario's fleet.pools, else one pool of `replicas` of its engine
/// (no model name: the engines' default, the gateway's only pool).
std::vector<FleetPool> PoolsOf(const Scenario& sc, std::int32_t replicas) {
  if (!sc.fleet.pools.empty()) {
    return sc.fleet.pools;
  }
  return {FleetPool{"", replicas, "", {}}};
}

/// The gateway's config file for `pools` (models, fallbacks, clamps, the engines' URLs in
/// order) and the cascade's `order`: the model cascade needs the pools named, which flags
/// cannot say.
std::string PoolsYaml(const std::vector<FleetPool>& pools, const std::vector<std::string>& urls,
                      const Fleet& fleet) {
  std::string yaml;
  if (!fleet.cascade_order.empty()) {
    yaml += fmt::format("cascade:\n  order: [{}]\n", fmt::join(fleet.cascade_order, ", "));
  }
  if (fleet.cache_max_entries > 0) {
    yaml += fmt::format("cache:\n  max_entries: {}\n", fleet.cache_max_entries);
    if (fleet.cache_ttl_s.has_value()) {
      yaml += fmt::format("  ttl_s: {}\n", *fleet.cache_ttl_s);
    }
  }
  yaml += "pools:\n";
  std::size_t e = 0;
  for (const FleetPool& p : pools) {
    yaml += fmt::format("  - model: \"{}\"\n", p.model);
    if (!p.fallbacks.empty()) {
      yaml += "    fallbacks: [";
      for (std::size_t i = 0; i < p.fallbacks.size(); ++i) {
        yaml += fmt::format("{}\"{}\"", i > 0 ? ", " : "", p.fallbacks[i]);
      }
      yaml += "]\n";
    }
    if (p.degrade_max_tokens > 0) {
      yaml += fmt::format("    degrade_max_tokens: {}\n    degrade_ttft_fraction: {}\n",
                          p.degrade_max_tokens, p.degrade_ttft_fraction);
    }
    yaml += "    endpoints:\n";
    for (std::int32_t i = 0; i < p.replicas; ++i) {
      yaml += fmt::format("      - \"{}\"\n", urls[e++]);
    }
  }
  return yaml;
}

int RunFleet(const FleetArgs& a) {
  const Scenario sc = LoadScenario(a.scenario);
  if (!sc.fleet.pools.empty() && a.replicas > 0) {
    std::cerr << "spillway fleet: --replicas: the scenario's fleet gives its replicas per pool ("
              << a.scenario << ", fleet.pools)\n";
    return 2;
  }
  const std::int32_t replicas = a.replicas > 0          ? a.replicas
                                : sc.fleet.replicas > 0 ? sc.fleet.replicas
                                                        : 3;
  const std::vector<FleetPool> pools = PoolsOf(sc, replicas);
  std::string router = !a.router.empty() ? a.router : sc.fleet.router;
  if (router.empty() || router == "least-loaded") {
    router = "gateway";  // least-loaded is the simulator's oracle: live, a gateway routes
  }
  std::vector<FaultAction> faults;
  for (const FaultAction& f :
       a.no_faults ? std::vector<FaultAction>{} : Schedule(sc.fleet.faults)) {
    if (f.at_s >= sc.ArrivalSpan()) {
      std::cerr << fmt::format(
          "spillway fleet: {}: fault at {:g} s comes after the last arrival ({:g} s): a live "
          "run ends before it; skipped\n",
          a.scenario, f.at_s, sc.ArrivalSpan());
      continue;
    }
    faults.push_back(f);
  }
  for (const FaultAction& f : faults) {
    if (f.engine >= static_cast<std::size_t>(replicas)) {
      throw config::ConfigError(
          fmt::format("{}: fleet.faults: engine {} does not exist ({} replicas)", a.scenario,
                      f.engine, replicas));
    }
  }
  const bool keep_logs = !a.logs_dir.empty();
  const std::string logs =
      a.logs_dir.empty()
          ? (std::filesystem::temp_directory_path() / fmt::format("spillway-fleet-{}", ::getpid()))
                .string()
          : a.logs_dir;
  std::filesystem::create_directories(logs);
  OutputFile json(a.json_out, "--json");  // replaced only when the run succeeds

  std::vector<std::unique_ptr<ChildProcess>> engines;
  for (const FleetPool& pool : pools) {
    for (std::int32_t i = 0; i < pool.replicas; ++i) {
      std::vector<std::string> args = {
          "serve", "--port", "0", "--scenario", a.scenario, "--fault-metrics-stall-on-sigusr1"};
      if (!a.policy.empty()) {
        args.insert(args.end(), {"--policy", a.policy});
      }
      if (!pool.model.empty()) {
        args.insert(args.end(), {"--model", pool.model});
      }
      if (!pool.profile.empty()) {
        args.insert(args.end(), {"--profile", pool.profile});
      }
      engines.push_back(std::make_unique<ChildProcess>(
          args, fmt::format("{}/serve-{}.log", logs, engines.size())));
    }
  }
  std::vector<std::string> gateway_args = {"gateway", "--port", "0", "--router", router};
  std::vector<std::string> urls;
  for (auto& e : engines) {
    urls.push_back(e->WaitUntilListening(15));
  }
  if (sc.fleet.pools.empty() && sc.fleet.cache_max_entries == 0) {
    for (const std::string& url : urls) {
      gateway_args.insert(gateway_args.end(), {"--endpoint", url});
    }
  } else {
    const std::string config = logs + "/gateway.yaml";
    std::ofstream(config) << PoolsYaml(pools, urls, sc.fleet);
    gateway_args.insert(gateway_args.end(), {"--config", config});
  }
  if (sc.slo.ttft_s.has_value()) {
    gateway_args.insert(gateway_args.end(), {"--ttft-slo-s", fmt::format("{}", *sc.slo.ttft_s)});
  }
  if (sc.settings.request_timeout_s.has_value()) {  // the scenario's deadline, at both tiers
    gateway_args.insert(gateway_args.end(),
                        {"--request-timeout-s", fmt::format("{}", *sc.settings.request_timeout_s)});
  }
  if (sc.fleet.scrape_interval_s.has_value()) {
    gateway_args.insert(gateway_args.end(),
                        {"--scrape-interval-s", fmt::format("{}", *sc.fleet.scrape_interval_s)});
  }
  if (!sc.fleet.staleness.empty()) {
    gateway_args.insert(gateway_args.end(), {"--staleness", sc.fleet.staleness});
  }
  if (sc.fleet.stale_after_s.has_value()) {
    gateway_args.insert(gateway_args.end(),
                        {"--stale-after-s", fmt::format("{}", *sc.fleet.stale_after_s)});
  }
  if (sc.fleet.queue_max_wait_s.has_value()) {
    gateway_args.insert(gateway_args.end(),
                        {"--queue-max-wait-s", fmt::format("{}", *sc.fleet.queue_max_wait_s)});
  }
  ChildProcess gateway(gateway_args, logs + "/gateway.log");
  loadgen::BenchOptions o;
  o.target_url = gateway.WaitUntilListening(15);
  // The engine-side figures (queues, preemptions, engine time) from the engines themselves:
  // the gateway exports its own metrics, not theirs.
  for (auto& e : engines) {
    o.metrics_urls.push_back(e->WaitUntilListening(15));
  }
  o.seed = sc.seed;
  o.model = pools.front().model;  // the model every request asks for (empty: the engines')
  o.policy_label = a.policy_label.empty() ? (a.policy.empty() ? "fleet" : a.policy) + "@" + router
                                          : a.policy_label;
  o.progress = !a.no_progress && ::isatty(STDERR_FILENO) == 1;
  // Give the gateway a first scrape of every engine before the load starts.
  std::this_thread::sleep_for(std::chrono::milliseconds(600));

  std::atomic<std::size_t> applied{0};  // faults signalled so far, in schedule order
  std::jthread injector([&faults, &engines, &applied](std::stop_token stop) {
    const auto start = std::chrono::steady_clock::now();
    for (const FaultAction& f : faults) {
      const auto when = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(f.at_s));
      while (std::chrono::steady_clock::now() < when) {
        if (stop.stop_requested()) {
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      engines[f.engine]->Signal(f.signal);
      ++applied;
      std::cerr << fmt::format("spillway fleet: t = {:.1f} s: {}\n", f.at_s, f.what);
    }
  });
  const std::string started_at = UtcNow();
  loadgen::BenchResult r = loadgen::RunBench(sc, o);
  r.summary.command = Invocation();
  r.summary.started_at = started_at;
  injector.request_stop();
  injector.join();
  const std::string gateway_line = GatewayLine(o.target_url);
  r.summary.replicas = replicas;
  r.summary.router = router;
  gateway.Stop(5);
  for (auto& e : engines) {
    e->Stop(5);
  }
  if (!keep_logs && !r.interrupted) {
    std::error_code ignored;
    std::filesystem::remove_all(logs, ignored);
  }
  std::cout << fmt::format(
      "scenario {} ({}), seed {}, {} emulated engines behind spillway gateway (router {}), "
      "live over HTTP on loopback; {}\n",
      sc.name, sc.file, o.seed, replicas, router,
      keep_logs || r.interrupted ? "logs in " + logs : "(--logs DIR keeps the logs)");
  for (std::size_t i = 0; i < applied.load(); ++i) {
    std::cout << fmt::format("  fault at {:.1f} s: {}\n", faults[i].at_s, faults[i].what);
  }
  if (r.interrupted) {
    std::cout << "interrupted: the summary covers the run until Ctrl-C\n";
  }
  std::cout << "\n" << CompareTable({r.summary});
  std::cout << fmt::format("\nclient: transport errors {}, peak in flight {}\n", r.transport_errors,
                           r.max_in_flight)
            << gateway_line;
  if (std::ofstream* out = json.stream()) {
    *out << SummaryToJson(r.summary);
    json.Commit();
    std::cout << "\nsummary written to " << a.json_out << "\n";
  }
  return 0;
}

}  // namespace

void AddFleetCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<FleetArgs>();
  CLI::App* cmd = app.add_subcommand(
      "fleet",
      "Run a fleet scenario live: emulated engines behind spillway gateway, the load, the faults");
  cmd->add_option("--scenario", a->scenario, "Scenario YAML file with a fleet: section")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--replicas", a->replicas,
                  "Engines [default: the scenario's fleet.replicas, else 3]")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--router", a->router,
                  "The gateway's router: gateway, round-robin, least-requests, llm-d [default: "
                  "the scenario's fleet.router, else gateway]")
      ->check(CLI::IsMember({"gateway", "round-robin", "least-requests", "llm-d"}));
  cmd->add_option("--policy", a->policy,
                  "The engines' admission: unbounded, tail-drop, predictive, forecast [default: "
                  "the scenario's, else forecast]")
      ->check(CLI::IsMember(
          std::vector<std::string>(kAdmissionPolicyNames.begin(), kAdmissionPolicyNames.end())));
  cmd->add_option("--policy-label", a->policy_label,
                  "Name of this run in the table and JSON [default: POLICY@ROUTER]");
  cmd->add_option("--json", a->json_out, "Write the run summary JSON here")->check(kNonEmptyPath);
  cmd->add_option("--logs", a->logs_dir,
                  "Directory for the engines' and the gateway's logs [default: a temporary one]");
  cmd->add_flag("--no-faults", a->no_faults, "Run without the scenario's fleet faults");
  cmd->add_flag("--no-progress", a->no_progress, "No progress line, even on a terminal");
  cmd->callback([a, exit_code] {
    try {
      *exit_code = RunFleet(*a);
    } catch (const config::ConfigError& e) {
      std::cerr << "spillway fleet: " << e.what() << "\n";
      *exit_code = 2;
    } catch (const std::exception& e) {
      std::cerr << "spillway fleet: error: " << e.what() << "\n";
      *exit_code = 1;
    }
  });
}

}  // namespace spillway::app
