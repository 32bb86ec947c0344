// `spillway policy init --calibration RUN --scenario FILE --out FILE`: a draft policy from a
// capacity run (`spillway sim --measure-capacity --json RUN`) and the workload scenario it
// measured (src/policy/policy_init.h says what each value is filled from).

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "admission/admission.h"
#include "cli_checks.h"
#include "commands.h"
#include "config/config_error.h"
#include "output_file.h"
#include "policy/policy_check.h"
#include "policy/policy_init.h"
#include "policy/policy_reader.h"
#include "policy_findings.h"
#include "report/summary_reader.h"
#include "sim/run_config.h"
#include "workload/scenario.h"

namespace spillway::app {
namespace {

struct InitArgs {
  std::string calibration;
  std::string scenario;
  std::string out;
  std::string name;
  std::string profile_dir;
  std::optional<double> gpu_hour_usd;
  std::string gpu_price_source;
  std::string naive_run;    // a run summary holding a naive FIFO (unbounded) run, or ""
  std::string cascade_run;  // a run summary holding a run a fallback model served, or ""
  bool force = false;
};

// The runs of the run summary given as `flag`.
std::vector<RunSummary> ReadRuns(const std::string& path, const char* flag) {
  try {
    return ReadRunSummaries(path);
  } catch (const RunJsonError& e) {
    throw config::ConfigError(std::string(flag) + ": " + e.what());
  }
}

int RunPolicyInit(const InitArgs& a) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!a.force && fs::exists(a.out, ec)) {
    std::cerr << "--out: " << a.out << " exists; give --force to replace it\n";
    return 2;
  }
  policy::InitInputs in;
  Scenario scenario;
  EngineConfig engine;
  try {
    in.run = policy::ReadCapacityRun(a.calibration);
    if (!a.naive_run.empty()) {
      in.naive_fifo = policy::NaiveFifoWastedCost(ReadRuns(a.naive_run, "--naive-run"), a.naive_run,
                                                  a.gpu_hour_usd);
    }
    if (!a.cascade_run.empty()) {
      in.cascade =
          policy::CascadeFallbackTtft(ReadRuns(a.cascade_run, "--cascade-run"), a.cascade_run);
    }
    scenario = LoadScenario(a.scenario);
    engine = ResolveRunConfig(scenario, AdmissionPolicy::kForecast,
                              a.profile_dir.empty() ? DefaultProfileDir() : a.profile_dir);
  } catch (const config::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  if (engine.profile.name != in.run.profile) {
    std::cerr << a.calibration << ": measured on profile " << in.run.profile << ", but "
              << a.scenario << " runs " << engine.profile.name
              << ": measure the scenario's engine (spillway sim --scenario " << a.scenario
              << " --measure-capacity --json RUN)\n";
    return 2;
  }
  for (const std::string& input : {a.calibration, a.scenario, a.naive_run, a.cascade_run}) {
    if (input.empty()) {
      continue;
    }
    if (fs::equivalent(a.out, input, ec)) {
      std::cerr << "--out: " << a.out << " is " << input
                << ", an input the policy cites: write the policy elsewhere\n";
      return 2;
    }
  }
  if (in.run.at_search_ceiling) {
    std::cerr << "warning: " << a.calibration << ": mu is at the search's ceiling (at least "
              << in.run.mu_rps << " req/s, not the sustainable rate)\n";
  }
  if (!fs::equivalent(in.run.scenario, a.scenario, ec)) {
    std::cerr << "warning: " << a.calibration << " measured " << in.run.scenario << ", not "
              << a.scenario << ": its mu is for that mix\n";
  }
  in.scenario = &scenario;
  in.scenario_path = a.scenario;
  in.engine = &engine;
  in.name = a.name;
  in.gpu_hour_usd = a.gpu_hour_usd;
  in.gpu_price_source = a.gpu_price_source;
  const std::string yaml = policy::InitPolicyYaml(in);
  policy::Policy draft;
  try {
    draft = policy::ReadPolicyString(yaml, a.out);
  } catch (const config::ConfigError& e) {
    std::cerr << "the draft from " << a.calibration
              << " does not read (nothing written): " << e.what() << "\n";
    return 2;
  }
  try {
    const fs::path parent = fs::path(a.out).parent_path();
    if (!parent.empty()) {
      fs::create_directories(parent);
    }
    OutputFile out(a.out, "--out");
    *out.stream() << yaml;
    out.Commit();
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  const auto today = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
  const std::vector<policy::Finding> findings = PolicyFindings(draft, today);
  std::cout << fmt::format(
      "wrote {}: mu {:g} req/s ({} bound) from {}{}{}, {} fields; check: {}, {} findings (run "
      "spillway policy check {})\n",
      a.out, in.run.mu_rps, in.run.binding_slo, a.calibration,
      in.naive_fifo ? fmt::format("; wasted under naive FIFO ${:.4f} ({:.1f} engine s over a "
                                  "{:g} s run) from {}",
                                  in.naive_fifo->usd, in.naive_fifo->engine_s,
                                  in.naive_fifo->burst_s, a.naive_run)
                    : std::string(),
      in.cascade ? fmt::format("; fallback {} at p95 TTFT {:.0f} ms ({} requests) from {}",
                               in.cascade->model, in.cascade->ttft_p95_s * 1e3,
                               in.cascade->completed, a.cascade_run)
                 : std::string(),
      draft.values.size(), policy::HasError(findings) ? "FAILED" : "ok", findings.size(), a.out);
  for (const policy::Finding& f : findings) {
    if (f.severity == policy::Severity::kError) {
      std::cout << f.Text() << "\n";
    }
  }
  return policy::HasError(findings) ? 1 : 0;
}

}  // namespace

void AddPolicyInitCommand(CLI::App& policy, int* exit_code) {
  auto a = std::make_shared<InitArgs>();
  CLI::App* cmd = policy.add_subcommand(
      "init", "Write a draft policy from a capacity run and the workload scenario it measured");
  cmd->add_option("--calibration", a->calibration,
                  "The capacity run: spillway sim --scenario FILE --measure-capacity --json RUN")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--scenario", a->scenario, "The workload scenario")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", a->out, "The policy file to write")->required()->check(kNonEmptyPath);
  cmd->add_option("--name", a->name, "policy.name (default: from the profile and engine)");
  CLI::Option* price = cmd->add_option("--gpu-hour-usd", a->gpu_hour_usd,
                                       "The GPU's price, $ per hour (default: 0, marked not set)")
                           ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--gpu-price-source", a->gpu_price_source,
                  "Where the price comes from (its bound, e.g. a price list and its date)")
      ->needs(price);
  cmd->add_option("--naive-run", a->naive_run,
                  "A run summary (sim or bench --json) holding a naive FIFO run (policy "
                  "unbounded) priced or priceable: cost.wasted_usd_naive_fifo from its engine "
                  "seconds on not-completed work")
      ->check(CLI::ExistingFile);
  cmd->add_option("--cascade-run", a->cascade_run,
                  "A run summary (bench or fleet --json) holding a run a fallback model served "
                  "(a gateway's cascade): cascade.fallback_model and its p95 TTFT")
      ->check(CLI::ExistingFile);
  cmd->add_option("--profile-dir", a->profile_dir, "Directory of profile YAML files");
  cmd->add_flag("--force", a->force, "Replace --out when it exists");
  cmd->callback([a, exit_code] { *exit_code = RunPolicyInit(*a); });
}

}  // namespace spillway::app
