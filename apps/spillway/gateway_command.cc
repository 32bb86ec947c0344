// `spillway gateway`: the two-stage admission's first stage in front of OpenAI-compatible
// engines (docs/gateway.md). The common keys are flags; flags win over the YAML file (--config),
// which wins over the defaults. `--endpoint [KIND=]URL` (repeatable) adds endpoints to the pool
// of `--model` (or, without it, to pools named by what each endpoint's GET /v1/models reports).

#include <functional>
#include <iostream>
#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli_checks.h"
#include "commands.h"
#include "config/config_error.h"
#include "gateway/gateway.h"
#include "gateway/gateway_config.h"

namespace spillway::app {
namespace {

struct GatewayArgs {
  std::string config_path;
  std::vector<std::string> endpoints;
  std::string model;
  std::string policy;
  std::string staleness;
  gateway::GatewayConfig values;
  std::vector<std::function<void(gateway::GatewayConfig&)>> apply;
};

template <typename T>
CLI::Option* Flag(CLI::App* cmd, GatewayArgs* a, const std::string& name,
                  T gateway::GatewayConfig::*field, const std::string& help) {
  CLI::Option* opt = cmd->add_option(name, a->values.*field, help)->capture_default_str();
  a->apply.push_back([opt, a, field](gateway::GatewayConfig& c) {
    if (opt->count() > 0) {
      c.*field = a->values.*field;
    }
  });
  return opt;
}

/// A flag for a key inside one of the config's sections: `set` applies it after the file (the
/// flag wins).
void NestedFlag(CLI::App* cmd, GatewayArgs* a, const std::string& name,
                void (*set)(gateway::GatewayConfig&, double), const std::string& help) {
  cmd->add_option_function<double>(
      name,
      [a, set](double v) {
        a->apply.push_back([v, set](gateway::GatewayConfig& c) { set(c, v); });
      },
      help);
}

void AddFlags(CLI::App* cmd, GatewayArgs* a) {
  using C = gateway::GatewayConfig;
  Flag(cmd, a, "--host", &C::host, "Listen address");
  Flag(cmd, a, "--port", &C::port, "Listen port (0 = any free port)")->check(kPort);
  Flag(cmd, a, "--threads", &C::threads, "I/O threads (0 = one per core)");
  Flag(cmd, a, "--max-connections", &C::max_connections, "Connections beyond this get 503");
  Flag(cmd, a, "--scrape-interval-s", &C::scrape_interval_s,
       "GET /metrics of every endpoint this often");
  Flag(cmd, a, "--request-timeout-s", &C::request_timeout_s,
       "The gateway's deadline: 504 (or an SSE error event) and the upstream closed");
  cmd->add_option_function<std::int32_t>(
         "--max-attempts",
         [a](std::int32_t v) {
           a->apply.push_back([v](gateway::GatewayConfig& c) { c.retry.max_attempts = v; });
         },
         "Sends per request, retries included [default: 2]")
      ->check(CLI::Range(1, 10));
  Flag(cmd, a, "--drain-timeout-s", &C::drain_timeout_s, "SIGTERM drain budget");
  cmd->add_option("--endpoint", a->endpoints,
                  "An upstream, [KIND=]URL (KIND: vllm, sglang, tgi, llamacpp, spillway, openai; "
                  "default: detected from its /metrics); repeatable");
  cmd->add_option("--model", a->model,
                  "The model the --endpoint upstreams serve [default: what their GET /v1/models "
                  "reports]");
  cmd->add_option("--router", a->policy,
                  "gateway (predicted TTFT, power of two choices), round-robin, least-requests, "
                  "llm-d [default: gateway]");
  cmd->add_option("--staleness", a->staleness,
                  "fail-open or fail-close: how endpoints with stale metrics are routed "
                  "[default: fail-open]");
  using G = gateway::GatewayConfig;
  NestedFlag(
      cmd, a, "--ttft-slo-s", [](G& c, double v) { c.router.ttft_slo_s = v; },
      "The TTFT SLO a request must be predicted to meet [default: 1]");
  NestedFlag(
      cmd, a, "--stale-after-s", [](G& c, double v) { c.router.stale_after_s = v; },
      "Metrics older than this are stale [default: 1]");
  cmd->add_option_function<std::string>(
         "--prefix-aware",
         [a](const std::string& v) {
           a->apply.push_back(
               [on = v == "true"](gateway::GatewayConfig& c) { c.router.prefix.enabled = on; });
         },
         "true or false: route a prompt where its prefix was sent before (gateway: predicted "
         "without the prefill of what an endpoint that reports prefix caching holds; llm-d: its "
         "prefix-cache scorer) [default: true]")
      ->check(CLI::IsMember({"true", "false"}));
  NestedFlag(
      cmd, a, "--queue-max-wait-s", [](G& c, double v) { c.queue.max_wait_s = v; },
      "gateway router: the longest a request waits for a slot when no endpoint can start "
      "it within the TTFT SLO now, seconds (0: refused at once) [default: 0]");
  NestedFlag(
      cmd, a, "--prediction-quantile", [](G& c, double v) { c.prediction.quantile = v; },
      "gateway router: admit against the TTFT SLO less this quantile of its recent TTFT "
      "prediction errors (0: off) [default: 0.95]");
  NestedFlag(
      cmd, a, "--fair-share-min-ratio", [](G& c, double v) { c.fair_share.min_share_ratio = v; },
      "Fair shedding in each pool: a flow (x-gateway-inference-fairness-id, else the tenant) "
      "refused for load may fall to this fraction of its offered share of the forwarded "
      "requests before flows served above theirs get 429 fair_share (0: off) [default: 0]");
}

/// The config file (if any) with the flags applied over it, validated. Throws
/// config::ConfigError.
gateway::GatewayConfig MergedConfig(const GatewayArgs& a) {
  gateway::GatewayConfig config = gateway::LoadGatewayConfig(a.config_path);
  for (const auto& apply : a.apply) {
    apply(config);
  }
  if (!a.policy.empty() && !routing::ParseRouterPolicy(a.policy, &config.router.policy)) {
    throw config::ConfigError("--router '" + a.policy +
                              "': must be one of gateway, round-robin, least-requests, llm-d");
  }
  if (!a.staleness.empty() && !routing::ParseStaleness(a.staleness, &config.router.staleness)) {
    throw config::ConfigError("--staleness '" + a.staleness + "': must be fail-open or fail-close");
  }
  if (!a.endpoints.empty()) {
    gateway::PoolConfig pool;
    pool.model = a.model;
    for (const std::string& e : a.endpoints) {
      pool.endpoints.push_back(gateway::ParseEndpointFlag(e));
    }
    config.pools.push_back(std::move(pool));
  } else if (!a.model.empty()) {
    throw config::ConfigError("--model names the model of the --endpoint upstreams: give them");
  }
  gateway::ValidateGatewayConfig(config,
                                 a.config_path.empty() ? "flags" : a.config_path + " + flags");
  return config;
}

int RunGateway(const std::shared_ptr<GatewayArgs>& a) {
  // SIGHUP reads the file again and applies the same flags over it.
  gateway::Gateway gw(MergedConfig(*a), [a] { return MergedConfig(*a); });
  return gw.Run();
}

}  // namespace

void AddGatewayCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<GatewayArgs>();
  CLI::App* cmd = app.add_subcommand(
      "gateway",
      "Routing and admission in front of OpenAI-compatible engines (vLLM, SGLang, TGI, "
      "llama.cpp, spillway serve)");
  cmd->add_option("--config", args->config_path, "YAML config file (docs/gateway.md)")
      ->check(CLI::ExistingFile);
  AddFlags(cmd, args.get());
  cmd->callback([args, exit_code] {
    try {
      *exit_code = RunGateway(args);
    } catch (const config::ConfigError& e) {
      std::cerr << "spillway gateway: " << e.what() << "\n";
      *exit_code = 2;
    } catch (const std::exception& e) {
      std::cerr << "spillway gateway: error: " << e.what() << "\n";
      *exit_code = 1;
    }
  });
}

}  // namespace spillway::app
