#include "gateway/gateway_config.h"

#include <gtest/gtest.h>

#include "common/config_error_of.h"

namespace spillway::gateway {
namespace {

using testing_util::ErrorOf;

TEST(GatewayConfigTest, DefaultsRunOutOfTheBox) {
  const GatewayConfig c = LoadGatewayConfig("");
  EXPECT_EQ(c.port, 8080);
  EXPECT_EQ(c.router.policy, routing::RouterPolicy::kGateway);
  EXPECT_EQ(c.router.staleness, routing::Staleness::kFailOpen);
  EXPECT_EQ(c.request_timeout_s, 4.5) << "the lesson's API-gateway tier";
  EXPECT_EQ(c.retry.max_attempts, 2);
  EXPECT_EQ(c.retry.budget_ratio, 0.1);
  EXPECT_EQ(c.queue.max_wait_s, 0) << "the wait queue is off (docs/gateway.md says why)";
  EXPECT_TRUE(c.pools.empty());
}

TEST(GatewayConfigTest, ReadsEverySection) {
  const GatewayConfig c = LoadGatewayConfigFromString(R"(
listen: {host: 0.0.0.0, port: 9000, threads: 2}
router: {policy: llm-d, ttft_slo_s: 0.5, stale_after_s: 2, staleness: fail-close, seed: 7}
scrape: {interval_s: 0.1, timeout_s: 0.2}
timeouts: {request_timeout_s: 10, connect_timeout_s: 0.25, drain_timeout_s: 5}
retries: {max_attempts: 3, budget_ratio: 0.2, budget_window_s: 5, min_retries: 1}
queue: {max_wait_s: 0.3, standing_max_wait_s: 0.01, max_queued: 64, aging_s: 0.2}
health: {probe_interval_s: 1, eject_after_errors: 5, eject_base_s: 2, max_ejected_fraction: 0.3}
pools:
  - model: llama-2-7b
    endpoints:
      - {url: "http://10.0.0.1:8000", kind: vllm}
      - "sglang=http://10.0.0.2:30000"
  - model: llama-3.2-1b
    endpoints: [{url: "http://10.0.0.3:8000"}]
  - model: gpt-4o-mini
    endpoints:
      - {url: "http://10.0.0.9:8000", kind: openai, max_running: 200, service_rate_rps: 40,
         prefill_tokens_per_s: 20000}
)",
                                                      "gw.yaml");
  EXPECT_EQ(c.host, "0.0.0.0");
  EXPECT_EQ(c.port, 9000);
  EXPECT_EQ(c.router.policy, routing::RouterPolicy::kLlmd);
  EXPECT_EQ(c.router.ttft_slo_s, 0.5);
  EXPECT_EQ(c.router.staleness, routing::Staleness::kFailClose);
  EXPECT_EQ(c.router.seed, 7u);
  EXPECT_EQ(c.scrape_interval_s, 0.1);
  EXPECT_EQ(c.request_timeout_s, 10);
  EXPECT_EQ(c.retry.max_attempts, 3);
  EXPECT_EQ(c.health.eject_after_errors, 5);
  EXPECT_EQ(c.queue.max_wait_s, 0.3);
  EXPECT_EQ(c.queue.standing_max_wait_s, 0.01);
  EXPECT_EQ(c.queue.max_queued, 64);
  EXPECT_EQ(c.queue.aging_s, 0.2);
  EXPECT_EQ(c.PoolSettings().queue.max_queued, 64);
  ASSERT_EQ(c.pools.size(), 3u);
  ASSERT_EQ(c.pools[0].endpoints.size(), 2u);
  EXPECT_EQ(c.pools[0].endpoints[0].kind, routing::EngineKind::kVllm);
  EXPECT_EQ(c.pools[0].endpoints[1].kind, routing::EngineKind::kSglang);
  EXPECT_EQ(c.pools[0].endpoints[1].url, "http://10.0.0.2:30000");
  EXPECT_FALSE(c.pools[1].endpoints[0].kind.has_value()) << "detected at the first scrape";
  const routing::EndpointPriors defaults;
  EXPECT_EQ(c.pools[1].endpoints[0].priors.max_running, defaults.max_running);
  const routing::EndpointPriors& hosted = c.pools[2].endpoints[0].priors;
  EXPECT_EQ(hosted.max_running, 200);
  EXPECT_EQ(hosted.service_rate_rps, 40);
  EXPECT_EQ(hosted.prefill_tokens_per_s, 20000);
  EXPECT_TRUE(c.pools[2].endpoints[0].max_running_given);
  EXPECT_FALSE(c.pools[1].endpoints[0].max_running_given);
  ValidateGatewayConfig(c, "gw.yaml");
}

TEST(GatewayConfigTest, ErrorsNameFileLineFieldAndValue) {
  EXPECT_EQ(ErrorOf([] { LoadGatewayConfigFromString("router:\n  policy: fastest\n", "gw.yaml"); }),
            "gw.yaml:2: router.policy: must be one of gateway, round-robin, least-requests, "
            "llm-d, got 'fastest'");
  EXPECT_NE(ErrorOf([] { LoadGatewayConfigFromString("routr: {}\n", "gw.yaml"); }).find("routr"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString(
                  "pools: [{model: m, endpoints: [{url: \"http://h:1\", kind: triton}]}]\n",
                  "gw.yaml");
            }).find("kind"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString("retries: {max_attempts: 0}\n", "gw.yaml");
            }).find("retries.max_attempts"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString("queue: {max_wait_s: -1}\n", "gw.yaml");
            }).find("queue.max_wait_s"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString("queue: {aging_s: 0}\n", "gw.yaml");
            }).find("queue.aging_s"),
            std::string::npos);
  EXPECT_EQ(ErrorOf([] {
              LoadGatewayConfigFromString(
                  "pools:\n  - model: m\n    endpoints:\n      - {url: \"http://h:1\", "
                  "max_running: 0}\n",
                  "gw.yaml");
            }),
            "gw.yaml:4: pools[0].endpoints[0].max_running: must be in [1, 1000000], got '0'");
  // What is checked again after the merge is found in the file first, at its line; a message
  // that names the value does not name it twice; an absent field names its map's line.
  EXPECT_EQ(ErrorOf([] {
              LoadGatewayConfigFromString(
                  "pools:\n  - model: m\n    endpoints:\n      - \"http://h:1\"\n"
                  "      - \"http://h:1/\"\n",
                  "gw.yaml");
            }),
            "gw.yaml:5: pools[0].endpoints[1]: is listed twice (perhaps spelt another way), got "
            "'http://h:1/'");
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString(
                  "pools: [{model: m, endpoints: [\"http://h:1\"]}, {model: m, endpoints: "
                  "[\"http://h:2\"]}]\n",
                  "gw.yaml");
            }).find("gw.yaml:1: pools[1].model: is listed twice"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString("pools: [{model: m, endpoints: []}]\n", "gw.yaml");
            }).find("pools[0].endpoints: must be a list of at least one"),
            std::string::npos);
  EXPECT_EQ(ErrorOf([] {
              LoadGatewayConfigFromString(
                  "pools:\n  - model: m\n    endpoints:\n      - {kind: vllm}\n", "gw.yaml");
            }),
            "gw.yaml:4: pools[0].endpoints[0].url: is required, got nothing");
  const std::string port = ErrorOf([] {
    LoadGatewayConfigFromString("pools: [{model: m, endpoints: [\"http://h:99999\"]}]\n",
                                "gw.yaml");
  });
  EXPECT_EQ(port.find("got"), port.rfind("got")) << port;
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString("scrape: {interval_s: 0.001}\n", "gw.yaml");
            }).find("gw.yaml:1: scrape.interval_s: must be in [0.01, 3600]"),
            std::string::npos);
  // 0 is "off" where the docs say so.
  const GatewayConfig off = LoadGatewayConfigFromString(
      "queue: {max_wait_s: 0, standing_max_wait_s: 0}\nrouter: {prediction_quantile: 0}\n",
      "gw.yaml");
  EXPECT_EQ(off.queue.max_wait_s, 0);
  EXPECT_EQ(off.prediction.quantile, 0);
  EXPECT_EQ(off.fair_share.min_share_ratio, 0) << "fair shedding is off by default";
  // Fair shedding in each pool, passed to the routing core with the rest.
  const GatewayConfig fair = LoadGatewayConfigFromString(
      "router: {fair_share_min_ratio: 0.5, fair_share_window_s: 20}\n", "gw.yaml");
  EXPECT_EQ(fair.PoolSettings().fair_share.min_share_ratio, 0.5);
  EXPECT_EQ(fair.PoolSettings().fair_share.window_s, 20);
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString("router: {fair_share_min_ratio: 1.5}\n", "gw.yaml");
            }).find("gw.yaml:1: router.fair_share_min_ratio: must be in [0, 1]"),
            std::string::npos);
}

TEST(GatewayConfigTest, ValidationCatchesWhatNoSingleKeyCan) {
  GatewayConfig c;
  {
    GatewayConfig waits = c;
    waits.pools.push_back({"m", {{"http://127.0.0.1:1", std::nullopt}}});
    waits.queue.max_wait_s = 4.5;  // as long as the request deadline
    EXPECT_NE(ErrorOf([&] { ValidateGatewayConfig(waits, "flags"); }).find("queue.max_wait_s"),
              std::string::npos);
  }
  EXPECT_NE(ErrorOf([&] { ValidateGatewayConfig(c, "flags"); }).find("no endpoints"),
            std::string::npos);
  c.pools.push_back(
      {"m", {{"http://127.0.0.1:1", std::nullopt}, {"http://127.0.0.1:1", std::nullopt}}});
  EXPECT_NE(ErrorOf([&] { ValidateGatewayConfig(c, "flags"); }).find("listed twice"),
            std::string::npos);
  c.pools[0].endpoints.pop_back();
  c.request_timeout_s = 0.5;
  EXPECT_NE(ErrorOf([&] { ValidateGatewayConfig(c, "flags"); }).find("request_timeout_s"),
            std::string::npos);
  c.request_timeout_s = 4.5;
  c.router.ttft_slo_s = -1;  // from a flag: the file's ranges apply too
  EXPECT_NE(ErrorOf([&] { ValidateGatewayConfig(c, "flags"); }).find("router.ttft_slo_s"),
            std::string::npos);
  c.router.ttft_slo_s = 1;
  c.scrape_interval_s = 1e-9;
  EXPECT_NE(ErrorOf([&] { ValidateGatewayConfig(c, "flags"); }).find("scrape.interval_s"),
            std::string::npos);
  c.scrape_interval_s = 0.25;
  c.max_connections = 0;
  EXPECT_NE(ErrorOf([&] { ValidateGatewayConfig(c, "flags"); }).find("max_connections"),
            std::string::npos);
  c.max_connections = 10;
  c.pools[0].endpoints.push_back({"http://127.0.0.1:1/", std::nullopt});
  EXPECT_NE(ErrorOf([&] { ValidateGatewayConfig(c, "flags"); }).find("listed twice"),
            std::string::npos)
      << "a trailing slash is the same endpoint";
  c.pools[0].endpoints.pop_back();
  c.pools[0].endpoints[0].url = "https://api.example.com";
  EXPECT_NE(ErrorOf([&] { ValidateGatewayConfig(c, "flags"); }).find("http://"), std::string::npos);
}

TEST(GatewayConfigTest, TheCascadeNamesOtherPoolsAndKeysMayDenyIt) {
  const std::string pools =
      "pools:\n"
      "  - model: big\n"
      "    fallbacks: [small, hosted]\n"
      "    endpoints: [\"http://127.0.0.1:1\"]\n"
      "  - {model: small, endpoints: [\"http://127.0.0.1:2\"]}\n"
      "  - {model: hosted, endpoints: [\"openai=http://127.0.0.1:3\"]}\n";
  const GatewayConfig c = LoadGatewayConfigFromString(
      pools + "api_keys:\n  - {key: a, tenant: a}\n  - {key: d, tenant: d, cascade: deny}\n",
      "gw.yaml");
  EXPECT_EQ(c.pools[0].fallbacks, (std::vector<std::string>{"small", "hosted"}));
  EXPECT_TRUE(c.pools[1].fallbacks.empty());
  EXPECT_TRUE(c.api_keys.at("a").cascade) << "allowed unless a key denies it";
  EXPECT_FALSE(c.api_keys.at("d").cascade);
  ValidateGatewayConfig(c, "gw.yaml");

  EXPECT_EQ(ErrorOf([&] {
              LoadGatewayConfigFromString(pools + "api_keys: [{key: a, tenant: a, cascade: no}]\n",
                                          "gw.yaml");
            }),
            "gw.yaml:7: api_keys[0].cascade: must be allow or deny, got 'no'");
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString(
                  "pools: [{fallbacks: [x], endpoints: [\"http://127.0.0.1:1\"]}]\n", "gw.yaml");
            }).find("pools[0].fallbacks"),
            std::string::npos)
      << "a pool discovered from its endpoints has no name to cascade from";
  // In the file, at its line; and again once the flags are merged.
  for (const std::string fallbacks : {"[big]", "[tiny]", "[small, small]"}) {
    EXPECT_NE(ErrorOf([&] {
                LoadGatewayConfigFromString(
                    "pools:\n  - {model: big, fallbacks: " + fallbacks +
                        ", endpoints: [\"http://127.0.0.1:1\"]}\n"
                        "  - {model: small, endpoints: [\"http://127.0.0.1:2\"]}\n",
                    "gw.yaml");
              }).find("gw.yaml:2: pools[0].fallbacks: must name the models of other pools"),
              std::string::npos)
        << fallbacks;
  }
  GatewayConfig merged = c;
  for (const auto& [fallbacks, error] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"big"}, "fallback 'big' must be the model of another pool"},
           {{"tiny"}, "fallback 'tiny' must be the model of another pool (none serves it)"},
           {{"small", "small"}, "fallback 'small' is listed twice"}}) {
    merged.pools[0].fallbacks = fallbacks;
    EXPECT_NE(ErrorOf([&] { ValidateGatewayConfig(merged, "flags"); }).find(error),
              std::string::npos)
        << error;
  }
}

TEST(GatewayConfigTest, TheCascadeOrderAndAPoolsClampAreReadWithTheirLines) {
  const GatewayConfig defaults = LoadGatewayConfigFromString("", "gw.yaml");
  EXPECT_EQ(defaults.cascade_order, routing::DefaultCascadeOrder());
  const GatewayConfig c = LoadGatewayConfigFromString(
      "cascade:\n"
      "  order: [primary, fallback, clamp]\n"
      "pools:\n"
      "  - model: big\n"
      "    degrade_max_tokens: 64\n"
      "    degrade_ttft_fraction: 0.25\n"
      "    endpoints: [\"http://127.0.0.1:1\"]\n"
      "  - {model: small, endpoints: [\"http://127.0.0.1:2\"]}\n",
      "gw.yaml");
  EXPECT_EQ(c.cascade_order, (std::vector<routing::CascadeStep>{routing::CascadeStep::kPrimary,
                                                                routing::CascadeStep::kFallback,
                                                                routing::CascadeStep::kClamp}));
  EXPECT_EQ(c.pools[0].degrade, (routing::DegradeConfig{64, 0.25}));
  EXPECT_EQ(c.pools[1].degrade, routing::DegradeConfig{}) << "no clamp unless given";

  const std::string pool = "pools: [{model: m, endpoints: [\"http://127.0.0.1:1\"], ";
  EXPECT_EQ(ErrorOf([&] { LoadGatewayConfigFromString(pool + "degrade_max_tokens: -1}]\n", "g"); }),
            "g:1: pools[0].degrade_max_tokens: must be in [0, 16777216], got '-1'");
  EXPECT_EQ(
      ErrorOf([&] { LoadGatewayConfigFromString(pool + "degrade_ttft_fraction: 0}]\n", "g"); }),
      "g:1: pools[0].degrade_ttft_fraction: must be in (0, 1] (a fraction of the TTFT SLO), "
      "got '0'");
  EXPECT_EQ(
      ErrorOf([] { LoadGatewayConfigFromString("cascade:\n  order: [primary, lru]\n", "g"); }),
      "g:2: cascade.order[1]: must be one of cache, primary, clamp, fallback, reject, got "
      "'lru'");
  EXPECT_EQ(
      ErrorOf([] { LoadGatewayConfigFromString("cascade:\n  order: [clamp, primary]\n", "g"); }),
      "g:2: cascade.order: clamp and fallback come after primary (the model asked for is offered "
      "the request first)");
  EXPECT_EQ(ErrorOf([] { LoadGatewayConfigFromString("cascade:\n  order: [cache]\n", "g"); }),
            "g:2: cascade.order: the order names primary (the model's own pool)");
  EXPECT_EQ(ErrorOf([] { LoadGatewayConfigFromString("cascade:\n  order: primary\n", "g"); }),
            "g:2: cascade.order: must be a list of steps: cache, primary, clamp, fallback, reject, "
            "got 'primary'");
  EXPECT_NE(ErrorOf([] { LoadGatewayConfigFromString("cascade: {steps: [primary]}\n", "g"); }), "");
}

TEST(GatewayConfigTest, EndpointFlags) {
  EXPECT_EQ(ParseEndpointFlag("http://127.0.0.1:8000").url, "http://127.0.0.1:8000");
  EXPECT_FALSE(ParseEndpointFlag("http://127.0.0.1:8000").kind.has_value());
  const UpstreamConfig u = ParseEndpointFlag("tgi=http://h:80/prefix");
  EXPECT_EQ(u.kind, routing::EngineKind::kTgi);
  EXPECT_EQ(u.url, "http://h:80/prefix");
  EXPECT_EQ(ErrorOf([] { ParseEndpointFlag("triton=http://h:1"); }),
            "endpoint 'triton=http://h:1': kind 'triton' must be one of vllm, sglang, tgi, "
            "llamacpp, spillway, openai");
  EXPECT_NE(ErrorOf([] { ParseEndpointFlag("127.0.0.1:8000"); }), "");
  EXPECT_NE(ErrorOf([] { ParseEndpointFlag("http://h:1/?q=1"); }), "");
  EXPECT_EQ(ErrorOf([] { ParseEndpointFlag("http://127.0.0.1:99999"); }),
            "--endpoint 'http://127.0.0.1:99999': the port must be 1 to 65535, got '99999'");
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString("pools: [{model: m, endpoints: [42]}]\n", "gw.yaml");
            }).find("gw.yaml:1"),
            std::string::npos)
      << "an endpoint in the file names its line";
}

}  // namespace
}  // namespace spillway::gateway
