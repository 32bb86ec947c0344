// `spillway serve`: the OpenAI-compatible server. Every config key is also a flag; flags win
// over the YAML file (--config), which wins over the defaults.

#include <functional>
#include <iostream>
#include <memory>
#include <vector>

#include "commands.h"
#include "config/yaml_reader.h"
#include "server/server.h"
#include "server/server_config.h"

namespace spillway::app {
namespace {

// Flags are parsed into `values`; each option that was given copies its value into the loaded
// config afterwards.
struct ServeArgs {
  std::string config_path;
  server::ServerConfig values;
  std::string policy;
  std::string scheduling;
  std::int32_t max_num_seqs = 0;
  std::int32_t max_num_batched_tokens = 0;
  std::int32_t num_gpu_blocks = 0;
  std::int32_t max_model_len = 0;
  bool no_cancel_propagation = false;
  bool no_slo_budgets = false;
  bool no_chunked_prefill = false;
  std::vector<std::function<void(server::ServerConfig&)>> apply;
};

template <typename T>
void Flag(CLI::App* cmd, ServeArgs* a, const std::string& name, T server::ServerConfig::*field,
          const std::string& help) {
  CLI::Option* opt = cmd->add_option(name, a->values.*field, help)->capture_default_str();
  a->apply.push_back([opt, a, field](server::ServerConfig& c) {
    if (opt->count() > 0) {
      c.*field = a->values.*field;
    }
  });
}

template <typename T>
void OptionalFlag(CLI::App* cmd, ServeArgs* a, const std::string& name, T* store,
                  std::optional<T> server::ServerConfig::*field, const std::string& help) {
  CLI::Option* opt = cmd->add_option(name, *store, help);
  a->apply.push_back([opt, store, field](server::ServerConfig& c) {
    if (opt->count() > 0) {
      c.*field = *store;
    }
  });
}

void AddFlags(CLI::App* cmd, ServeArgs* a) {
  using C = server::ServerConfig;
  Flag(cmd, a, "--host", &C::host, "Listen address");
  Flag(cmd, a, "--port", &C::port, "Listen port (0 = any free port)");
  Flag(cmd, a, "--threads", &C::threads, "I/O threads (0 = one per core)");
  Flag(cmd, a, "--max-connections", &C::max_connections, "Connections beyond this get 503");
  Flag(cmd, a, "--max-body-bytes", &C::max_body_bytes, "Larger request bodies get 413");
  Flag(cmd, a, "--header-timeout-s", &C::header_timeout_s, "Deadline for a whole request");
  Flag(cmd, a, "--idle-timeout-s", &C::idle_timeout_s, "Keep-alive idle timeout");
  Flag(cmd, a, "--model", &C::model, "Served model name");
  Flag(cmd, a, "--profile", &C::profile, "Engine profile (name in profiles/ or YAML path)");
  Flag(cmd, a, "--profile-dir", &C::profile_dir, "Directory of profiles");
  OptionalFlag(cmd, a, "--max-num-seqs", &a->max_num_seqs, &C::max_num_seqs,
               "Running batch limit (default: derived from the TPOT SLO)");
  OptionalFlag(cmd, a, "--max-num-batched-tokens", &a->max_num_batched_tokens,
               &C::max_num_batched_tokens, "Token budget per step (default: derived)");
  OptionalFlag(cmd, a, "--num-gpu-blocks", &a->num_gpu_blocks, &C::num_gpu_blocks,
               "KV blocks (default: from the profile's memory)");
  OptionalFlag(cmd, a, "--max-model-len", &a->max_model_len, &C::max_model_len,
               "Context length (default: the profile's)");
  Flag(cmd, a, "--default-max-tokens", &C::default_max_tokens, "max_tokens when none is given");
  Flag(cmd, a, "--max-preemptions", &C::max_preemptions, "Per-request cap (0 = none)");
  Flag(cmd, a, "--long-prefill-token-threshold", &C::long_prefill_token_threshold,
       "Prompt tokens of one request per step (0 = no cap)");
  Flag(cmd, a, "--slo-budget-context-tokens", &C::slo_budget_context_tokens,
       "Context length a sequence is costed at when the budgets are derived");
  Flag(cmd, a, "--priority-aging-s", &C::priority_aging_s, "Seconds of wait worth one class");
  Flag(cmd, a, "--ttft-slo-s", &C::ttft_slo_s, "TTFT SLO (predictive admission)");
  Flag(cmd, a, "--tpot-slo-s", &C::tpot_slo_s, "TPOT SLO (batch budgets)");
  Flag(cmd, a, "--kv-headroom", &C::kv_headroom, "Reject new prefills above this KV usage");
  Flag(cmd, a, "--max-num-queued-reqs", &C::max_num_queued_reqs, "Hard queue limit (503)");
  Flag(cmd, a, "--max-num-queued-tokens", &C::max_num_queued_tokens, "Hard token limit (503)");
  Flag(cmd, a, "--degrade-max-tokens", &C::degrade_max_tokens, "Clamp max_tokens under load");
  Flag(cmd, a, "--client-timeout-s", &C::client_timeout_s, "Clients' timeout (validated)");
  Flag(cmd, a, "--request-timeout-s", &C::request_timeout_s, "Server deadline (504)");
  Flag(cmd, a, "--drain-timeout-s", &C::drain_timeout_s, "SIGTERM drain budget");
  CLI::Option* policy =
      cmd->add_option("--policy", a->policy, "Admission: unbounded, tail-drop, predictive");
  CLI::Option* scheduling = cmd->add_option("--scheduling", a->scheduling, "fcfs or priority");
  CLI::Option* no_cancel = cmd->add_flag("--no-cancel-propagation", a->no_cancel_propagation,
                                         "Keep generating for clients that left");
  CLI::Option* no_budgets =
      cmd->add_flag("--no-slo-budgets", a->no_slo_budgets, "Do not derive budgets from TPOT");
  CLI::Option* no_chunked = cmd->add_flag("--no-chunked-prefill", a->no_chunked_prefill,
                                          "Prefill each prompt in one step");
  a->apply.push_back([=](server::ServerConfig& c) {
    if (policy->count() > 0 && !ParseAdmissionPolicy(a->policy, &c.policy)) {
      throw config::ConfigError("--policy: must be unbounded, tail-drop or predictive, got '" +
                                a->policy + "'");
    }
    if (scheduling->count() > 0) {
      if (a->scheduling != "fcfs" && a->scheduling != "priority") {
        throw config::ConfigError("--scheduling: must be fcfs or priority, got '" + a->scheduling +
                                  "'");
      }
      c.scheduling =
          a->scheduling == "priority" ? SchedulingPolicy::kPriority : SchedulingPolicy::kFcfs;
    }
    if (no_cancel->count() > 0) {
      c.propagate_cancellation = false;
    }
    if (no_budgets->count() > 0) {
      c.slo_budgets = false;
    }
    if (no_chunked->count() > 0) {
      c.enable_chunked_prefill = false;
    }
  });
}

int RunServe(ServeArgs& a) {
  server::ServerConfig config = server::LoadServerConfig(a.config_path);
  for (const auto& apply : a.apply) {
    apply(config);
  }
  if (config.profile_dir.empty()) {
    config.profile_dir = DefaultProfileDir();
  }
  server::ValidateServerConfig(config, a.config_path.empty() ? "flags" : a.config_path);
  server::Server server(std::move(config));
  return server.Run();
}

}  // namespace

void AddServeCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "OpenAI-compatible server over the engine (emulated executor) with admission");
  cmd->add_option("--config", args->config_path, "YAML config file")->check(CLI::ExistingFile);
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
