// `spillway sim`: the discrete-event simulator over a scenario file.

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "admission/admission.h"
#include "commands.h"
#include "config/yaml_reader.h"
#include "report/summary_json.h"
#include "report/table.h"
#include "sim/capacity.h"
#include "sim/run_config.h"
#include "sim/simulator.h"
#include "workload/scenario.h"

namespace spillway::app {
namespace {

struct SimArgs {
  std::string scenario;
  std::string policy = "predictive";
  std::string compare;
  std::uint64_t seed = 1;
  std::int32_t replicas = 1;
  std::string json_out;
  bool measure_capacity = false;
  bool no_cancel_propagation = false;
  bool no_slo_budgets = false;
  bool no_check_invariants = false;
  std::string profile;
  std::string profile_dir;
  std::int32_t max_num_seqs = 0;
  std::int32_t max_num_batched_tokens = 0;
  std::int32_t max_num_queued_reqs = 0;
  double rate_multiplier = 0;
  double time_scale = 0;
};

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) {
      out.push_back(item);
    }
  }
  return out;
}

RunOverrides OverridesOf(const SimArgs& a) {
  RunOverrides o;
  if (!a.profile.empty()) {
    o.profile = a.profile;
  }
  if (a.max_num_seqs > 0) {
    o.max_num_seqs = a.max_num_seqs;
  }
  if (a.max_num_batched_tokens > 0) {
    o.max_num_batched_tokens = a.max_num_batched_tokens;
  }
  if (a.max_num_queued_reqs > 0) {
    o.max_num_queued_reqs = a.max_num_queued_reqs;
  }
  if (a.no_cancel_propagation) {
    o.propagate_cancellation = false;
  }
  if (a.no_slo_budgets) {
    o.slo_budgets = false;
  }
  return o;
}

void PrintEngine(const RunConfig& rc) {
  const Profile& p = rc.profile;
  std::cout << fmt::format(
      "engine: emulated executor (cost model, no GPU), profile {} ({} on {}), {} KV blocks of {} "
      "tokens\n",
      p.name, p.model, p.gpu, rc.num_gpu_blocks, p.block_size);
  std::cout << fmt::format("scheduler: max_num_seqs {}, max_num_batched_tokens {}{}\n",
                           rc.scheduler.max_num_seqs, rc.scheduler.max_num_batched_tokens,
                           rc.slo_budgets ? fmt::format(" (derived from the TPOT SLO: full step "
                                                        "{:.1f} ms)",
                                                        rc.slo_budgets->full_step_s * 1e3)
                                          : std::string());
}

int RunCapacity(const Scenario& sc, const RunConfig& rc, const SimArgs& a) {
  CapacityOptions opt;
  opt.seed = a.seed;
  const CapacityResult r = MeasureCapacity(sc, rc, opt);
  for (const CapacityProbe& p : r.probes) {
    std::cout << fmt::format("  probe {:7.2f} req/s: p95 TTFT {:8.3f} s, p95 TPOT {:7.4f} s  {}\n",
                             p.rate_rps, p.ttft_p95_s, p.tpot_p95_s,
                             p.within_slo ? "within SLO" : "over SLO");
  }
  std::cout << fmt::format(
      "sustainable rate mu = {:.2f} req/s (p95 TTFT <= {} s and p95 TPOT <= "
      "{} s, Poisson arrivals of the scenario's mix)\n",
      r.mu_rps, *sc.slo.ttft_s, *sc.slo.tpot_s);
  return 0;
}

int RunSim(const SimArgs& a) {
  Scenario sc = LoadScenario(a.scenario);
  if (a.rate_multiplier > 0 || a.time_scale > 0) {
    if (sc.arrival.kind != ArrivalProcess::Kind::kTrace) {
      std::cerr << "spillway sim: --rate-multiplier and --time-scale apply to trace scenarios\n";
      return 2;
    }
    sc.arrival.rate_multiplier =
        a.rate_multiplier > 0 ? a.rate_multiplier : sc.arrival.rate_multiplier;
    sc.arrival.time_scale = a.time_scale > 0 ? a.time_scale : sc.arrival.time_scale;
  }
  const std::string profile_dir = a.profile_dir.empty() ? DefaultProfileDir() : a.profile_dir;
  std::vector<std::string> policies =
      a.compare.empty() ? std::vector<std::string>{a.policy} : SplitCommas(a.compare);
  const double context = MeanContextTokens(sc, a.seed);
  SimOptions opt;
  opt.seed = a.seed;
  opt.replicas = a.replicas;
  opt.check_invariants = !a.no_check_invariants;

  std::vector<RunSummary> runs;
  for (const std::string& name : policies) {
    AdmissionPolicy policy{};
    if (!ParseAdmissionPolicy(name, &policy)) {
      std::cerr << "spillway sim: unknown policy '" << name
                << "' (known: unbounded, tail-drop, predictive)\n";
      return 2;
    }
    const RunConfig rc = ResolveRunConfig(sc, policy, profile_dir, OverridesOf(a), context);
    if (runs.empty()) {
      PrintEngine(rc);
      if (a.measure_capacity) {
        return RunCapacity(sc, rc, a);
      }
    }
    runs.push_back(Simulate(sc, rc, opt));
  }
  std::cout << fmt::format(
      "scenario {} ({}), seed {}, {} replica(s), simulated in virtual time\n\n", sc.name, sc.file,
      a.seed, a.replicas);
  std::cout << CompareTable(runs);
  if (!a.json_out.empty()) {
    std::ofstream out(a.json_out);
    if (!out) {
      std::cerr << "spillway sim: cannot write " << a.json_out << "\n";
      return 1;
    }
    out << (runs.size() == 1 ? SummaryToJson(runs.front()) : SummariesToJson(runs));
    std::cout << "\nsummary written to " << a.json_out << "\n";
  }
  return 0;
}

}  // namespace

void AddSimCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<SimArgs>();
  CLI::App* sim = app.add_subcommand(
      "sim", "Simulate a scenario against the engine and an admission policy in virtual time");
  sim->add_option("--scenario", args->scenario, "Scenario YAML file")
      ->required()
      ->check(CLI::ExistingFile);
  sim->add_option("--policy", args->policy, "Admission policy: unbounded, tail-drop, predictive")
      ->capture_default_str();
  sim->add_option("--compare", args->compare,
                  "Comma-separated policies to run side by side, e.g. "
                  "unbounded,tail-drop,predictive");
  sim->add_option("--seed", args->seed, "Random seed (same seed, same output)")
      ->capture_default_str();
  sim->add_option("--replicas", args->replicas, "Engine replicas behind least-loaded routing")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  sim->add_option("--json", args->json_out, "Write the run summary JSON here");
  sim->add_flag("--measure-capacity", args->measure_capacity,
                "Find the sustainable rate mu for the scenario's mix and print it");
  sim->add_option("--profile", args->profile, "Engine profile name or YAML path");
  sim->add_option("--profile-dir", args->profile_dir, "Directory of profile YAML files");
  sim->add_flag("--no-cancel-propagation", args->no_cancel_propagation,
                "Do not abort requests whose client left (shows the doomed work)");
  sim->add_flag("--no-slo-budgets", args->no_slo_budgets,
                "Do not derive max_num_seqs / token budget from the TPOT SLO");
  sim->add_flag("--no-check-invariants", args->no_check_invariants,
                "Skip the engine invariant checks after every step (faster)");
  sim->add_option("--max-num-seqs", args->max_num_seqs, "Override max_num_seqs");
  sim->add_option("--max-num-batched-tokens", args->max_num_batched_tokens,
                  "Override max_num_batched_tokens");
  sim->add_option("--max-num-queued-reqs", args->max_num_queued_reqs,
                  "Override the waiting-queue bound (tail-drop, predictive)");
  sim->add_option("--rate-multiplier", args->rate_multiplier,
                  "Trace replay: send each trace request this many times on average (3 = 3x load)")
      ->check(CLI::PositiveNumber);
  sim->add_option("--time-scale", args->time_scale,
                  "Trace replay: multiply trace timestamps (0.5 = twice as fast)")
      ->check(CLI::PositiveNumber);
  sim->callback([args, exit_code] {
    try {
      *exit_code = RunSim(*args);
    } catch (const config::ConfigError& e) {
      std::cerr << "spillway sim: " << e.what() << "\n";
      *exit_code = 2;
    } catch (const std::exception& e) {
      std::cerr << "spillway sim: error: " << e.what() << "\n";
      *exit_code = 1;
    }
  });
}

}  // namespace spillway::app
