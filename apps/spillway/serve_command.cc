// `spillway serve`: the OpenAI-compatible server. Every config key is also a flag; flags win
// over the YAML file (--config), which wins over a scenario's settings (--scenario), which win
// over the defaults.

#include <functional>
#include <iostream>
#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_checks.h"
#include "commands.h"
#include "config/config_error.h"
#include "config/server_config.h"
#include "server/server.h"
#include "setting_flags.h"
#include "sim/run_config.h"
#include "workload/scenario.h"

namespace spillway::app {
namespace {

// Flags are parsed into `values`; each option that was given copies its value into the loaded
// config afterwards. The engine settings' flags come from the settings table.
struct ServeArgs {
  std::string config_path;
  std::string scenario_path;
  server::ServerConfig values;
  config::EngineSettings settings;  // engine settings given as flags
  std::vector<std::function<void(server::ServerConfig&)>> apply;
};

template <typename T>
CLI::Option* Flag(CLI::App* cmd, ServeArgs* a, const std::string& name,
                  T server::ServerConfig::*field, const std::string& help) {
  CLI::Option* opt = cmd->add_option(name, a->values.*field, help)->capture_default_str();
  a->apply.push_back([opt, a, field](server::ServerConfig& c) {
    if (opt->count() > 0) {
      c.*field = a->values.*field;
    }
  });
  return opt;
}

void AddFlags(CLI::App* cmd, ServeArgs* a) {
  using C = server::ServerConfig;
  Flag(cmd, a, "--host", &C::host, "Listen address");
  Flag(cmd, a, "--port", &C::port, "Listen port (0 = any free port)")->check(kPort);
  Flag(cmd, a, "--threads", &C::threads, "I/O threads (0 = one per core)");
  Flag(cmd, a, "--max-connections", &C::max_connections, "Connections beyond this get 503");
  Flag(cmd, a, "--max-body-bytes", &C::max_body_bytes, "Larger request bodies get 413");
  Flag(cmd, a, "--header-timeout-s", &C::header_timeout_s, "Deadline for a whole request");
  Flag(cmd, a, "--idle-timeout-s", &C::idle_timeout_s, "Keep-alive idle timeout");
  Flag(cmd, a, "--model", &C::model, "Served model name");
  Flag(cmd, a, "--profile-dir", &C::profile_dir, "Directory of profiles");
  Flag(cmd, a, "--default-max-tokens", &C::default_max_tokens, "max_tokens when none is given");
  cmd->add_option_function<double>(
      "--client-timeout-s",
      [a](double v) {
        a->apply.push_back([v](server::ServerConfig& c) { c.client_timeout_s = v; });
      },
      "Clients' timeout, validated against the request deadline [default: the request deadline "
      "+ 0.5 s]");
  Flag(cmd, a, "--drain-timeout-s", &C::drain_timeout_s, "SIGTERM drain budget");
  cmd->add_flag_function(
      "--fault-metrics-stall-on-sigusr1",
      [a](std::int64_t) {
        a->apply.push_back(
            [](server::ServerConfig& c) { c.fault_metrics_stall_on_sigusr1 = true; });
      },
      "Fault injection: each SIGUSR1 toggles a stall of GET /metrics (scrapers time out)");
  AddSettingFlags(cmd, &a->settings);
}

int RunServe(ServeArgs& a) {
  server::ServerConfig config = server::LoadServerConfig(a.config_path);
  for (const auto& apply : a.apply) {
    apply(config);
  }
  config::EngineSettings base;
  if (!a.scenario_path.empty()) {
    // The engine the scenario describes (what `spillway sim` runs for it), under the file.
    const Scenario scenario = LoadScenario(a.scenario_path);
    base = ScenarioSettings(scenario);
    if (!scenario.admission.tenants.empty()) {
      std::cerr << "spillway serve: " << a.scenario_path
                << ": admission.tenants are not served (serve's tenants and their buckets come "
                   "from api_keys in --config)\n";
    }
  }
  config.engine = config::Overlay(config::Overlay(base, config.engine), a.settings);
  if (config.profile_dir.empty()) {
    config.profile_dir = DefaultProfileDir();
  }
  // Name every source of the values in an error (a scenario, the config file, the flags).
  std::string origin;
  for (const std::string& source : {a.scenario_path, a.config_path}) {
    if (!source.empty()) {
      origin += source + " + ";
    }
  }
  server::ValidateServerConfig(config, origin + "flags");
  server::Server server(std::move(config));
  return server.Run();
}

}  // namespace

void AddServeCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "OpenAI-compatible server over the engine (emulated executor) with admission");
  cmd->add_option("--config", args->config_path, "YAML config file")->check(CLI::ExistingFile);
  cmd->add_option("--scenario", args->scenario_path,
                  "Serve the engine a scenario file describes (its engine, admission, timeouts "
                  "and slo sections; the config file and flags win)")
      ->check(CLI::ExistingFile);
  AddFlags(cmd, args.get());
  cmd->callback([args, exit_code] {
    try {
      *exit_code = RunServe(*args);
    } catch (const config::ConfigError& e) {
      std::cerr << "spillway serve: " << e.what() << "\n";
      *exit_code = 2;
    } catch (const std::exception& e) {
      std::cerr << "spillway serve: error: " << e.what() << "\n";
      *exit_code = 1;
    }
  });
}

}  // namespace spillway::app
