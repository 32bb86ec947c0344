// `spillway policy render`: the one page from the reference policy, in Markdown and HTML, each
// value with its source; and the serve config it makes, read back by serve's own loader.

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "common/run_command.h"
#include "common/text_file.h"
#include "config/server_config.h"
#include "gateway/gateway_config.h"
#include "policy/policy_check.h"
#include "policy/policy_reader.h"
#include "policy/policy_render.h"

namespace spillway::policy {
namespace {

const std::string kRenderPolicy = std::string(SPILLWAY_SOURCE_DIR) + "/policies/reference.yaml";

RenderContext OnTheDay(const Policy& p) {
  return {"2026-12-05", CheckPolicy(p, *ParseDay("2026-12-05"))};
}

TEST(PolicyRenderTest, TheMarkdownPageGivesEachValueItsSourceAndTheDerivedFigures) {
  const Policy p = ReadPolicyFile(kRenderPolicy);
  const std::string md = RenderMarkdown(p, OnTheDay(p));
  for (const char* expected :
       {"# Overload and Failure Policy: reference (emulated seed-a100-7b behind spillway serve)",
        "`spillway policy check` as of 2026-12-05: ok (4 findings)",
        "| Single-replica mu | 10.34 req/s | measured 2026-12-05T01:01:00Z: `spillway sim "
        "--scenario scenarios/seed-burst.yaml --measure-capacity --json "
        "out/policy/capacity.json` (out/policy/capacity.json, engine spillway emulated "
        "executor, profile seed-a100-7b) |",
        "| KV bytes/token | 524288 bytes (512 KiB) | bound: 2 (K and V) x 32 layers",
        "| Aggregate mu | 10.34 req/s | derived: replicas x single-replica mu |",
        "| Goodput page floor | 9.306 req/s |",
        "| Queue ingress deadline | 1.0 s | decision: the TTFT SLO;",
        "## Validation checklist\n\n- [ ] Replica baseline measured",
        "| Measured fallback TTFT | 0.0162 s | measured 2026-12-05T13:36:20Z: `spillway fleet",
        "| Quality delta on the eval set | (not given) |  |"}) {
    EXPECT_NE(md.find(expected), std::string::npos) << expected << "\n---\n" << md;
  }
}

TEST(PolicyRenderTest, ThePageShowsAFailedCheckAndTheChecklistVerdicts) {
  std::string yaml = testing_util::ReadTextFile(kRenderPolicy);
  const std::string unchecked = "  retry_storm:\n    verdict: unchecked";
  yaml.replace(yaml.find(unchecked), unchecked.size(),
               "  retry_storm:\n    verdict: pass\n    evidence: peak <1.3x> the mean & no spike\n"
               "    checked_at: 2026-12-05");
  const Policy p = ReadPolicyString(yaml, "p.yaml");
  const RenderContext late{"2027-06-01", CheckPolicy(p, *ParseDay("2027-06-01")),
                           "spillway policy verify"};
  const std::string md = RenderMarkdown(p, late);
  EXPECT_NE(md.find("as of 2027-06-01: FAILED"), std::string::npos) << md;
  // The page names the command that wrote it: verify renders it too.
  EXPECT_NE(md.find("on 2027-06-01 by `spillway policy verify`."), std::string::npos) << md;
  EXPECT_NE(md.find("- [x] Retry storm of 100 clients x 3 retries with jitter: no synchronised "
                    "spike: peak &lt;1.3x> the mean & no spike (2026-12-05)"),
            std::string::npos)
      << md;
  const std::string html = RenderHtml(p, late);
  EXPECT_NE(html.find("peak &lt;1.3x&gt; the mean &amp; no spike"), std::string::npos);
  EXPECT_EQ(html.find("peak <1.3x>"), std::string::npos) << "escaped";
  EXPECT_NE(html.find("<li class=\"error\">"), std::string::npos);
  EXPECT_NE(html.find("by <code>spillway policy verify</code>"), std::string::npos);
  EXPECT_EQ(html.rfind("</html>\n"), html.size() - 8);
}

TEST(PolicyRenderTest, TheServeConfigReadsBackWithThePolicysNumbers) {
  const Policy p = ReadPolicyFile(kRenderPolicy);
  const server::ServerConfig c =
      server::LoadServerConfigFromString(ServeConfigYaml(p), "serve.yaml");
  EXPECT_EQ(c.engine.profile, "seed-a100-7b");
  EXPECT_EQ(c.engine.max_num_seqs, 27);
  EXPECT_EQ(c.engine.max_num_batched_tokens, 200);
  EXPECT_EQ(c.engine.policy, "forecast");
  EXPECT_EQ(c.engine.ttft_slo_s, 1.0);
  EXPECT_EQ(c.engine.tpot_slo_s, 0.035);
  EXPECT_EQ(c.engine.kv_headroom, 0.85);
  EXPECT_EQ(c.engine.max_num_queued_reqs, 256);
  EXPECT_EQ(c.engine.degrade_max_tokens, 64);
  EXPECT_EQ(c.engine.request_timeout_s, 4.5);
  EXPECT_EQ(c.client_timeout_s, 5.0);
  server::ValidateServerConfig(c, "serve.yaml");  // the timeout hierarchy serve checks
}

TEST(PolicyRenderTest, ANameWithANewlineStaysOnItsLineInEveryRenderedFile) {
  std::string yaml = testing_util::ReadTextFile(kRenderPolicy);
  const std::size_t at = yaml.find("  name: meta-llama/Llama-2-7b-chat-hf");
  yaml.replace(at, yaml.find('\n', at) - at, "  name: \"llama\\ncache: {max_entries: 1}\"");
  const Policy p = ReadPolicyString(yaml, "p.yaml");
  const std::string gateway = GatewayConfigYaml(p);
  EXPECT_NE(gateway.find("# pools: the engines of llama cache: {max_entries: 1}"),
            std::string::npos)
      << gateway;
  EXPECT_EQ(YAML::Load(gateway)["cache"]["max_entries"].as<int>(), 10000) << "the policy's own";
  EXPECT_FALSE(YAML::Load(ServeConfigYaml(p))["cache"].IsDefined());
}

TEST(PolicyRenderTest, TheGatewayConfigReadsBackWithThePolicysNumbers) {
  const Policy p = ReadPolicyFile(kRenderPolicy);
  const std::string yaml = GatewayConfigYaml(p);
  gateway::GatewayConfig c = gateway::LoadGatewayConfigFromString(yaml, "gateway.yaml");
  EXPECT_EQ(c.router.ttft_slo_s, 1.0);
  EXPECT_EQ(c.request_timeout_s, 4.5);
  EXPECT_EQ(c.cache.max_entries, 10000);  // the policy keeps an exact-result cache
  EXPECT_NE(yaml.find("#     degrade_max_tokens: 64"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("rate_rps: 30, burst: 60, retry_rps: 5"), std::string::npos) << yaml;
  c.pools.push_back(gateway::PoolConfig{});  // the deployment gives the endpoints
  c.pools.back().endpoints.push_back(gateway::ParseEndpointFlag("vllm=http://127.0.0.1:8000"));
  gateway::ValidateGatewayConfig(c, "gateway.yaml");  // the timeout order the gateway checks
}

TEST(PolicyRenderCommandTest, RenderWritesThePageInBothFormsAndServesConfig) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "spillway_policy_render";
  std::filesystem::remove_all(dir);
  const testing_util::CommandResult r =
      testing_util::RunCommand({SPILLWAY_BINARY, "policy", "render", kRenderPolicy, "--out",
                                dir.string(), "--today", "2026-12-05"},
                               60);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"policy.md", "policy.html", "serve.yaml"}) {
    EXPECT_GT(std::filesystem::file_size(dir / name), 100U) << name;
  }
  EXPECT_EQ(testing_util::RunCommand({SPILLWAY_BINARY, "policy", "render", kRenderPolicy, "--out",
                                      dir.string(), "--today", "someday"},
                                     60)
                .exit_code,
            2);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace spillway::policy
