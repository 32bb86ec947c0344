// `spillway sim`: the discrete-event simulator over a scenario file.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>
#include "admission/admission.h"
#include "cli_checks.h"
#include "gpu_price.h"

#include "commands.h"
#include "config/config_error.h"
#include "config/engine_settings.h"
#include "engine/resolve.h"
#include "executor/emulated_executor.h"
#include "invocation.h"
#include "output_file.h"
#include "report/summary_json.h"
#include "report/table.h"
#include "setting_flags.h"
#include "sim/capacity.h"
#include "sim/run_config.h"
#include "sim/sim_pools.h"
#include "sim/simulator.h"
#include "workload/scenario.h"

namespace spillway::app {
namespace {

struct SimArgs {
  std::string scenario;
  std::string policy;  // empty: the scenario's admission.policy, else the default (forecast)
  std::string compare;
  std::uint64_t seed = 1;
  CLI::Option* seed_option = nullptr;
  std::int32_t replicas = 1;
  std::string router = "least-loaded";  // or a routing::RouterPolicy name: the gateway routes
  double scrape_interval_s = 0.25;
  std::string staleness = "fail-open";
  double stale_after_s = 1.0;
  std::string prefix_aware = "true";
  double queue_max_wait_s = routing::WaitQueueConfig{}.max_wait_s;
  double prediction_quantile = PredictionErrorConfig{}.quantile;
  double gateway_fair_share_min_ratio = 0;
  // The fleet flags, to tell given from default (a scenario's fleet: section fills the rest).
  CLI::Option* replicas_option = nullptr;
  CLI::Option* router_option = nullptr;
  CLI::Option* scrape_option = nullptr;
  CLI::Option* staleness_option = nullptr;
  CLI::Option* stale_after_option = nullptr;
  CLI::Option* queue_option = nullptr;
  std::string json_out;
  std::string records_out;
  bool predict_ttft = false;
  bool measure_capacity = false;
  std::string check_invariants = "amortized";
  std::string profile_dir;
  RunOverrides settings;  // the engine settings flags, over the scenario's
  double rate_multiplier = 0;
  double time_scale = 0;
  std::optional<double> gpu_hour_usd;
};

/// The scenario's fleet: section for every fleet flag not given.
void ApplyFleet(const Fleet& fleet, SimArgs* a) {
  if (fleet.replicas > 0 && a->replicas_option->count() == 0) {
    a->replicas = fleet.replicas;
  }
  if (!fleet.router.empty() && a->router_option->count() == 0) {
    a->router = fleet.router;
  }
  if (fleet.scrape_interval_s.has_value() && a->scrape_option->count() == 0) {
    a->scrape_interval_s = *fleet.scrape_interval_s;
  }
  if (!fleet.staleness.empty() && a->staleness_option->count() == 0) {
    a->staleness = fleet.staleness;
  }
  if (fleet.stale_after_s.has_value() && a->stale_after_option->count() == 0) {
    a->stale_after_s = *fleet.stale_after_s;
  }
  if (fleet.queue_max_wait_s.has_value() && a->queue_option->count() == 0) {
    a->queue_max_wait_s = *fleet.queue_max_wait_s;
  }
}

// The names of a comma-separated list, empty ones kept ("a,,b" and "a," name an empty one,
// which the option's check refuses as unknown); "" is no name at all.
std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) {
    return out;
  }
  std::size_t start = 0;
  for (std::size_t comma = s.find(','); comma != std::string::npos; comma = s.find(',', start)) {
    out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  out.push_back(s.substr(start));
  return out;
}

// The --policy and --compare check: every name a known policy.
std::string CheckPolicyNames(const std::string& list) {
  const std::vector<std::string> names = SplitCommas(list);
  if (names.empty()) {
    return "needs at least one policy";
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    AdmissionPolicy policy{};
    if (!ParseAdmissionPolicy(names[i], &policy)) {
      return fmt::format("unknown policy '{}' (known: {})", names[i],
                         fmt::join(kAdmissionPolicyNames, ", "));
    }
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) !=
        names.begin() + static_cast<std::ptrdiff_t>(i)) {
      return "policy '" + names[i] + "' is given twice (its runs would be the same)";
    }
  }
  return {};
}

void PrintEngine(const RunConfig& rc) {
  const Profile& p = rc.profile;
  std::cout << fmt::format(
      "engine: EMULATED executor (roofline cost model, no GPU), profile {} ({} on {}), "
      "{} KV blocks of {} tokens, max_model_len {}\n",
      p.name, p.model, p.gpu, rc.num_gpu_blocks, p.block_size, rc.max_model_len);
  // Each budget is derived from the TPOT SLO unless a flag or the scenario set it.
  const bool seqs_derived =
      rc.slo_budgets && rc.scheduler.max_num_seqs == rc.slo_budgets->max_num_seqs;
  const bool tokens_derived = rc.slo_budgets && rc.scheduler.max_num_batched_tokens ==
                                                    rc.slo_budgets->max_num_batched_tokens;
  const auto origin = [](bool derived) {
    return derived ? std::string() : std::string(" (explicit)");
  };
  std::cout << fmt::format("scheduler: max_num_seqs {}{}, max_num_batched_tokens {}{}{}\n",
                           rc.scheduler.max_num_seqs, origin(seqs_derived),
                           rc.scheduler.max_num_batched_tokens, origin(tokens_derived),
                           seqs_derived || tokens_derived
                               ? fmt::format(" (derived from the TPOT SLO: full step {:.1f} ms)",
                                             rc.slo_budgets->full_step_s * 1e3)
                               : std::string());
  if (const std::string long_prefill = LongPrefillSummary(rc.scheduler); !long_prefill.empty()) {
    std::cout << "scheduler: " << long_prefill << "\n";
  }
  if (rc.slo_budgets && rc.slo_budgets->max_num_seqs == 1) {
    std::cout << fmt::format(
        "warning: even one sequence exceeds the TPOT target ({:.1f} ms a "
        "step): the SLO is out of reach on this profile\n",
        rc.slo_budgets->full_step_s * 1e3);
  }
}

int RunCapacity(const Scenario& sc, const RunConfig& rc, const SimArgs& a, OutputFile* json) {
  CapacityOptions opt;
  opt.seed = a.seed;
  const CapacityResult r = MeasureCapacity(sc, rc, opt);
  for (const CapacityProbe& p : r.probes) {
    std::cout << fmt::format(
        "  probe {:7.2f} req/s: completed {:5.1f}%, p95 TTFT {:8.3f} s, p95 TPOT {:7.4f} s  {}\n",
        p.rate_rps, 100 * p.completed_fraction, p.ttft_p95_s, p.tpot_p95_s,
        p.within_slo ? "within SLO" : "over SLO");
  }
  const std::string bound = r.at_search_ceiling ? ">= " : "= ";
  std::cout << fmt::format(
      "sustainable rate mu {}{:.2f} req/s per replica (p95 TTFT <= {} s and p95 TPOT <= {} s; "
      "{})\n",
      bound, r.mu_rps, *sc.slo.ttft_s, *sc.slo.tpot_s,
      sc.arrival.kind == ArrivalProcess::Kind::kTrace ? "the trace replayed faster or slower"
                                                      : "Poisson arrivals of the scenario's mix");
  if (std::ofstream* out = json->stream()) {
    const CapacityProvenance from{a.scenario,    rc.profile.name, std::string(kEmulatedEngineName),
                                  Invocation(),  UtcNow(),        *sc.slo.ttft_s,
                                  *sc.slo.tpot_s};
    *out << CapacityToJson(r, from);
    json->Commit();
  }
  return 0;
}

int RunSim(SimArgs a) {  // a copy: the scenario's fleet fills the flags not given
  Scenario sc = LoadScenario(a.scenario);
  if (a.rate_multiplier > 0 || a.time_scale > 0) {
    if (sc.arrival.kind != ArrivalProcess::Kind::kTrace) {
      std::cerr << "spillway sim: --rate-multiplier and --time-scale apply to trace scenarios\n";
      return 2;
    }
    if (a.rate_multiplier > 0) {
      sc.arrival.rate_multiplier = a.rate_multiplier;
    }
    if (a.time_scale > 0) {
      sc.arrival.time_scale = a.time_scale;
    }
  }
  // The scenario's seed unless --seed is given.
  const std::uint64_t seed = a.seed_option->count() > 0 ? a.seed : sc.seed;
  if (OutputFile::SameFile(a.json_out, a.records_out)) {
    std::cerr << "spillway sim: --json and --records name the same file (" << a.json_out << ")\n";
    return 2;
  }
  OutputFile json(a.json_out, "--json");  // replaces the file only when the run succeeds
  OutputFile records(a.records_out, "--records");
  const std::string profile_dir = a.profile_dir.empty() ? DefaultProfileDir() : a.profile_dir;
  const std::vector<std::string> policies =
      a.compare.empty()
          ? std::vector<std::string>{!a.policy.empty() ? a.policy
                                                       : sc.settings.policy.value_or(
                                                             *config::EngineDefaults().policy)}
          : SplitCommas(a.compare);
  std::vector<AdmissionPolicy> parsed;
  for (const std::string& name : policies) {
    AdmissionPolicy policy{};
    if (!ParseAdmissionPolicy(name, &policy)) {
      std::cerr << "spillway sim: unknown policy '" << name
                << "' (known: " << fmt::format("{}", fmt::join(kAdmissionPolicyNames, ", "))
                << ")\n";
      return 2;
    }
    parsed.push_back(policy);
  }
  config::ValidateEngineSettings(a.settings, "flags");
  if (!sc.fleet.pools.empty() && a.replicas_option->count() > 0) {
    std::cerr << "spillway sim: --replicas: the scenario's fleet gives its replicas per pool ("
              << sc.file << ", fleet.pools)\n";
    return 2;
  }
  ApplyFleet(sc.fleet, &a);
  SimOptions base;
  base.seed = seed;
  base.replicas = a.replicas;
  base.invariant_checks = a.check_invariants == "every" ? InvariantChecks::kEveryStep
                          : a.check_invariants == "off" ? InvariantChecks::kOff
                                                        : InvariantChecks::kAmortized;
  base.faults = sc.fleet.faults;
  base.predict_ttft = a.predict_ttft;
  // Every router given (comma-separated) under every policy: one table, "POLICY@ROUTER".
  const std::vector<std::string> routers = SplitCommas(a.router);
  std::vector<RunSummary> runs;
  for (const std::string& router : routers) {
    SimOptions opt = base;
    if (router != "least-loaded") {
      SimGateway gateway;
      // The names were checked by the options' validators.
      routing::ParseRouterPolicy(router, &gateway.router.policy);
      routing::ParseStaleness(a.staleness, &gateway.router.staleness);
      gateway.router.stale_after_s = a.stale_after_s;
      gateway.router.prefix.enabled = a.prefix_aware == "true";
      // The gateway admits against the scenario's TTFT SLO, as `spillway fleet` tells it to.
      gateway.router.ttft_slo_s = sc.slo.ttft_s.value_or(gateway.router.ttft_slo_s);
      gateway.router.seed = seed;
      gateway.scrape_interval_s = a.scrape_interval_s;
      gateway.queue.max_wait_s = a.queue_max_wait_s;
      gateway.prediction.quantile = a.prediction_quantile;
      gateway.fair_share.min_share_ratio = a.gateway_fair_share_min_ratio;
      if (!sc.fleet.cascade_order.empty()) {
        gateway.cascade_order.clear();
        for (const std::string& step : sc.fleet.cascade_order) {
          routing::ParseCascadeStep(step, &gateway.cascade_order.emplace_back());  // (checked)
        }
      }
      gateway.cache.max_entries = sc.fleet.cache_max_entries;
      gateway.cache.ttl_s = sc.fleet.cache_ttl_s.value_or(gateway.cache.ttl_s);
      opt.gateway = gateway;
    }
    for (const AdmissionPolicy policy : parsed) {
      // With pools (the model cascade), each runs its own profile; the first is the run's.
      opt.pools = ResolveSimPools(sc, policy, profile_dir, a.settings);
      const RunConfig rc = opt.pools.empty() ? ResolveRunConfig(sc, policy, profile_dir, a.settings)
                                             : *opt.pools.front().engine;
      if (runs.empty()) {
        PrintEngine(rc);
        if (a.measure_capacity) {
          return RunCapacity(sc, rc, a, &json);
        }
      }
      // Its label, as the table, the summary and the records name it: e.g. predictive@gateway
      // (admission @ router).
      std::string label(ToString(policy));
      if (opt.gateway.has_value() || routers.size() > 1) {
        label += "@" + router;
      }
      if (std::ofstream* out = records.stream()) {
        opt.on_record = [out, label](const AttemptRecord& r) {
          *out << RecordJson(r, label) << '\n';
        };
      }
      const std::string started_at = UtcNow();
      runs.push_back(Simulate(sc, rc, opt));
      runs.back().command = Invocation();
      runs.back().started_at = started_at;
      if (opt.gateway.has_value() || a.replicas > 1) {
        runs.back().router = router;
      }
      runs.back().policy = label;
      runs.back().gpu_hour_usd = a.gpu_hour_usd;
    }
  }
  std::cout << fmt::format(
      "scenario {} ({}), seed {}, {} replica(s) behind {} routing, simulated in virtual time\n\n",
      sc.name, sc.file, seed, a.replicas, a.router);
  std::cout << CompareTable(runs);
  if (std::ofstream* out = json.stream()) {
    *out << (runs.size() == 1 ? SummaryToJson(runs.front()) : SummariesToJson(runs));
    json.Commit();
    std::cout << "\nsummary written to " << a.json_out << "\n";
  }
  if (records.stream() != nullptr) {
    records.Commit();
    std::cout << "records written to " << a.records_out << "\n";
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
  CLI::Option* policy =
      sim->add_option("--policy", args->policy,
                      "Admission policy: unbounded, tail-drop, predictive, forecast [default: the "
                      "scenario's "
                      "admission.policy, else forecast]")
          ->check([](const std::string& s) {
            return s.find(',') != std::string::npos
                       ? std::string("one policy (several: --compare P1,P2,...)")
                       : CheckPolicyNames(s);
          });
  sim->add_option("--compare", args->compare,
                  "Comma-separated policies to run side by side, e.g. "
                  "unbounded,tail-drop,predictive")
      ->excludes(policy)
      ->check(CheckPolicyNames);
  args->seed_option =
      sim->add_option("--seed", args->seed, "Random seed (default: the scenario's seed)")
          ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1} << 62));
  args->replicas_option =
      sim->add_option("--replicas", args->replicas,
                      "Engine replicas behind the router [default: the scenario's fleet.replicas, "
                      "else 1]")
          ->check(CLI::Range(1, 1024))
          ->capture_default_str();
  CLI::Option* router = args->router_option = sim->add_option(
      "--router", args->router,
      "How requests reach the replicas: least-loaded (the fewest waiting + running now, an "
      "oracle, no gateway), or through a gateway: gateway (Spillway's: predicted TTFT from "
      "scraped metrics and measured rates, power of two choices), round-robin, least-requests "
      "(the gateway's own in-flight counts), llm-d (its saturation detector and scorers on "
      "scraped metrics); several, comma-separated, run side by side (with --compare: every "
      "policy behind every router)");
  router
      ->check([](const std::string& list) {
        const std::vector<std::string> names = SplitCommas(list);
        if (names.empty()) {
          return std::string("needs at least one router");
        }
        for (const std::string& n : names) {
          if (std::find(FleetRouterNames().begin(), FleetRouterNames().end(), n) ==
              FleetRouterNames().end()) {
            return "unknown router '" + n +
                   "' (known: least-loaded, gateway, round-robin, least-requests, llm-d)";
          }
        }
        return std::string();
      })
      ->capture_default_str();
  args->scrape_option =
      sim->add_option("--scrape-interval-s", args->scrape_interval_s,
                      "The gateway scrapes each replica's metrics this often, seconds (gateway, "
                      "llm-d)")
          ->check(FiniteIn(0.01, 60.0, /*lo_open=*/false))
          ->capture_default_str();
  args->staleness_option =
      sim->add_option(
             "--staleness", args->staleness,
             "--router gateway, metrics older than --stale-after-s: fail-open (route on the "
             "gateway's own counts) or fail-close (count the endpoint saturated); llm-d "
             "keeps its own 200 ms rule")
          ->check(CLI::IsMember({"fail-open", "fail-close"}))
          ->capture_default_str();
  args->stale_after_option =
      sim->add_option("--stale-after-s", args->stale_after_s,
                      "--router gateway: metrics older than this are stale, seconds")
          ->check(FiniteIn(0.01, 3600.0, /*lo_open=*/false))
          ->capture_default_str();
  sim->add_option("--prefix-aware", args->prefix_aware,
                  "true or false: the gateway routes a prompt where its prefix was sent before "
                  "(prefix-aware routing, spillway gateway's --prefix-aware)")
      ->check(CLI::IsMember({"true", "false"}))
      ->capture_default_str();
  args->queue_option =
      sim->add_option("--queue-max-wait-s", args->queue_max_wait_s,
                      "--router gateway: the longest a request waits in the gateway's queue for "
                      "a slot when no replica can start it within the TTFT SLO now, seconds (0: "
                      "refused at once)")
          ->check(FiniteIn(0.0, 3600.0, /*lo_open=*/false))
          ->capture_default_str();
  sim->add_option("--prediction-quantile", args->prediction_quantile,
                  "--router gateway: admit against the TTFT SLO less this quantile of the "
                  "gateway's recent TTFT prediction errors (0: off)")
      ->check(FiniteIn(0.0, 1.0, /*lo_open=*/false))
      ->capture_default_str();
  sim->add_option("--gateway-fair-share-min-ratio", args->gateway_fair_share_min_ratio,
                  "--router gateway: fair shedding in each pool at the gateway (as `spillway "
                  "gateway --fair-share-min-ratio`; the engines' own is --fair-share-min-ratio) "
                  "(0: off)")
      ->check(FiniteIn(0.0, 1.0, /*lo_open=*/false))
      ->capture_default_str();
  sim->add_flag("--predict-ttft", args->predict_ttft,
                "Predict each request's TTFT when it is admitted, by running the engine's "
                "scheduler forward, and put the errors in the summary JSON "
                "(ttft_prediction_abs_error_s, beside ttft_estimate_abs_error_s: admission's W_est "
                "+ t_prefill)");
  CLI::Option* records =
      sim->add_option(
             "--records", args->records_out,
             "Write one JSON line per attempt here, as `spillway bench --records` does, with "
             "\"run\": the policy (and @router) of the run it belongs to")
          ->check([](const std::string& s) {
            return s.empty() ? std::string("needs a file name") : std::string();
          });
  sim->add_option("--json", args->json_out, "Write the run summary JSON here")
      ->check([](const std::string& s) {
        return s.empty() ? std::string("needs a file name") : std::string();
      });
  sim->add_flag("--measure-capacity", args->measure_capacity,
                "Find the sustainable rate mu (one replica) for the scenario's mix")
      ->excludes(router)
      ->excludes(records);
  sim->add_option("--profile-dir", args->profile_dir, "Directory of profile YAML files");
  AddGpuPriceOptions(sim, &args->gpu_hour_usd);
  // Every engine, admission and timeouts setting (the scenario's values are the defaults).
  AddSettingFlags(sim, &args->settings, {"policy"});
  sim->add_option("--check-invariants", args->check_invariants,
                  "Engine invariant checks: every step, amortized (O(1) per step), or off")
      ->check(CLI::IsMember({"every", "amortized", "off"}))
      ->capture_default_str();
  sim->add_option("--rate-multiplier", args->rate_multiplier,
                  "Trace replay: send each trace request this many times on average (3 = 3x load)")
      ->check(FiniteIn(0.0, 100.0, /*lo_open=*/true));
  sim->add_option("--time-scale", args->time_scale,
                  "Trace replay: multiply trace timestamps (0.5 = twice as fast)")
      ->check(FiniteIn(0.0, 1e6, /*lo_open=*/true));
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
