// Reading a policy file: values with their sources, the checklists, and structural errors that
// name file, line and field.

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "policy/policy_reader.h"

namespace spillway::policy {
namespace {

// The smallest file that reads: every required field as a bare value (sources are checked by
// CheckPolicy, not by the reader).
std::string MinimalPolicy() {
  return R"(policy: {name: p, max_age_days: 30}
model: {name: m, profile: seed-a100-7b, weight_bytes: 1.4e10, gpu_memory_bytes: 8e10,
        kv_bytes_per_token: 524288, max_prompt_tokens: 512}
workload: {scenario: s.yaml, base_rate_rps: 8, burst_rate_rps: 30, burst_duration_s: 60}
slo: {ttft_p95_s: 1.0, tpot_p95_s: 0.035, e2e_p99_s: 5.0, goodput_share: 0.999}
capacity: {replicas: 4, single_replica_mu_rps: 10, binding_slo: ttft}
topology: {selected: replicas}
engine: {version: v, max_num_seqs: 27, max_num_batched_tokens: 200,
         enable_chunked_prefill: true, max_num_queued_reqs: 256}
admission: {tenant_rate_rps: 30, tenant_burst: 60, ttft_policy: forecast, kv_headroom: 0.85}
timeouts: {client_s: 5.0, gateway_s: 4.5, queue_ingress_s: 1.0}
retry: {max_retries: 3, backoff: exponential_jitter, per_client_rate_rps: 5}
observability: {waiting_requests: 10, waiting_for_s: 30, kv_cache_usage: 0.9,
                kv_cache_usage_for_s: 60, preemptions_per_min: 1, rejections_429_per_s: 5,
                goodput_share_of_mu: 0.9, goodput_for_s: 60}
cost: {gpu_hour_usd: 5.12}
)";
}

std::string ErrorOf(const std::string& yaml) {
  try {
    ReadPolicyString(yaml, "p.yaml");
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(PolicyReaderTest, AMinimalFileReadsEveryRequiredFieldAndLeavesTheChecklistsUnchecked) {
  const Policy p = ReadPolicyString(MinimalPolicy(), "p.yaml");
  EXPECT_EQ(p.Number("capacity.single_replica_mu_rps"), 10);
  EXPECT_EQ(p.Find("capacity.binding_slo")->text, "ttft");
  EXPECT_TRUE(p.Find("engine.enable_chunked_prefill")->flag);
  EXPECT_EQ(p.Find("cascade.clamp_max_tokens"), nullptr);  // optional, not given
  EXPECT_EQ(p.Find("slo.ttft_p95_s")->source.kind, SourceKind::kNone);
  ASSERT_EQ(p.validation.size(), ChecklistItems("validation").size());
  for (const ChecklistItem& item : p.validation) {
    EXPECT_EQ(item.verdict, Verdict::kUnchecked) << item.id;
  }
}

TEST(PolicyReaderTest, AValueCarriesItsMeasurementBoundOrDecision) {
  std::string yaml = MinimalPolicy();
  yaml.replace(yaml.find("single_replica_mu_rps: 10"), 25,
               "single_replica_mu_rps: {value: 10.34, measured: {run: out/c.json, command: "
               "spillway sim, at: 2026-12-05, engine: e, profile: seed-a100-7b}}");
  yaml.replace(yaml.find("kv_bytes_per_token: 524288"), 26,
               "kv_bytes_per_token: {value: 524288, bound: 2 x 32 x 32 x 128 x 2}");
  const Policy p = ReadPolicyString(yaml, "p.yaml");
  const Value& mu = *p.Find("capacity.single_replica_mu_rps");
  EXPECT_EQ(mu.number, 10.34);
  EXPECT_EQ(mu.source.kind, SourceKind::kMeasured);
  EXPECT_EQ(mu.source.measured.run, "out/c.json");
  EXPECT_EQ(mu.source.measured.at, "2026-12-05");
  EXPECT_EQ(mu.source.measured.profile, "seed-a100-7b");
  EXPECT_EQ(p.Find("model.kv_bytes_per_token")->source.kind, SourceKind::kBound);
  EXPECT_EQ(p.Find("model.kv_bytes_per_token")->source.text, "2 x 32 x 32 x 128 x 2");
}

TEST(PolicyReaderTest, StructuralErrorsNameFileLineAndField) {
  std::string yaml = MinimalPolicy();
  EXPECT_NE(ErrorOf(yaml + "approvals: {}\n").find("p.yaml:17: approvals: unknown field"),
            std::string::npos);

  std::string typo = yaml;
  typo.replace(typo.find("client_s"), 8, "clent_s");

  EXPECT_NE(ErrorOf(typo).find("p.yaml:11: timeouts.clent_s: unknown field"), std::string::npos)
      << ErrorOf(typo);

  std::string range = yaml;
  range.replace(range.find("kv_headroom: 0.85"), 17, "kv_headroom: 1.5");
  EXPECT_NE(ErrorOf(range).find("p.yaml:10: admission.kv_headroom: must be in (0, 1], got '1.5'"),
            std::string::npos)
      << ErrorOf(range);

  std::string price = yaml;  // past what --gpu-hour-usd takes: a price would overflow a cost
  price.replace(price.find("gpu_hour_usd: 5.12"), 18, "gpu_hour_usd: 1e308");
  EXPECT_NE(ErrorOf(price).find("cost.gpu_hour_usd: must be in [0, 1000000]"), std::string::npos)
      << ErrorOf(price);

  std::string word = yaml;
  word.replace(word.find("binding_slo: ttft"), 17, "binding_slo: ttfb");
  EXPECT_NE(ErrorOf(word).find("capacity.binding_slo: must be one of ttft, tpot, neither"),
            std::string::npos)
      << ErrorOf(word);

  std::string missing = yaml;
  missing.replace(missing.find("gpu_hour_usd: 5.12"), 18, "");
  EXPECT_NE(ErrorOf(missing).find("cost.gpu_hour_usd: is required"), std::string::npos)
      << ErrorOf(missing);
}

TEST(PolicyReaderTest, EveryStructuralErrorOfTheFileIsReportedALineEach) {
  std::string yaml = MinimalPolicy();
  yaml.replace(yaml.find("client_s"), 8, "clent_s");
  yaml.replace(yaml.find("kv_headroom: 0.85"), 17, "kv_headroom: 1.5");
  yaml.replace(yaml.find("gpu_hour_usd: 5.12"), 18, "");
  const std::string error = ErrorOf(yaml + "approvals: {}\n");
  // One error does not hide the next: five (the misspelt key is unknown, and the key it meant
  // is missing), in the order they are read.
  const std::vector<std::string> expected = {
      "p.yaml:17: approvals: unknown field", "p.yaml:10: admission.kv_headroom: must be in",
      "p.yaml:11: timeouts.clent_s: unknown field", "p.yaml:11: timeouts.client_s: is required",
      "cost.gpu_hour_usd: is required"};
  std::size_t at = 0;
  for (const std::string& e : expected) {
    const std::size_t found = error.find(e, at);
    ASSERT_NE(found, std::string::npos) << e << "\n---\n" << error;
    at = found;
  }
  EXPECT_EQ(std::count(error.begin(), error.end(), '\n'), 4) << error;
}

TEST(PolicyReaderTest, AMeasurementWithoutItsCommandOrTwoSourcesForOneValueAreErrors) {
  std::string no_command = MinimalPolicy();
  no_command.replace(no_command.find("single_replica_mu_rps: 10"), 25,
                     "single_replica_mu_rps: {value: 10, measured: {run: r, at: 2026-12-05}}");
  EXPECT_NE(ErrorOf(no_command).find("single_replica_mu_rps.measured.command: is required"),
            std::string::npos)
      << ErrorOf(no_command);

  std::string two = MinimalPolicy();
  two.replace(two.find("replicas: 4"), 11, "replicas: {value: 4, decision: a, bound: b}");
  EXPECT_NE(ErrorOf(two).find("capacity.replicas: has more than one source"), std::string::npos)
      << ErrorOf(two);
}

TEST(PolicyReaderTest, AChecklistVerdictNeedsEvidenceAndAKnownItem) {
  const std::string yaml = MinimalPolicy();
  EXPECT_NE(ErrorOf(yaml + "validation: {retry_storm: {verdict: pass}}\n")
                .find("validation.retry_storm.evidence: is required with a verdict"),
            std::string::npos);
  EXPECT_NE(ErrorOf(yaml + "validation: {retry_stom: {verdict: pass}}\n").find("unknown field"),
            std::string::npos);
  EXPECT_NE(ErrorOf(yaml + "validation: {retry_storm: {verdict: pass, evidence: e}}\n")
                .find("validation.retry_storm.checked_at: is required with a verdict"),
            std::string::npos);
  EXPECT_NE(ErrorOf(yaml + "validation: {retry_storm: {verdict: ok, evidence: e}}\n")
                .find("must be one of pass, fail, unchecked"),
            std::string::npos);
  const Policy p = ReadPolicyString(
      yaml +
          "validation: {retry_storm: {verdict: pass, evidence: peak 1.4x mean, checked_at: "
          "2026-12-05}}\n",
      "p.yaml");
  const auto it = std::find_if(p.validation.begin(), p.validation.end(),
                               [](const ChecklistItem& i) { return i.id == "retry_storm"; });
  ASSERT_NE(it, p.validation.end());
  EXPECT_EQ(it->verdict, Verdict::kPass);
  EXPECT_EQ(it->evidence, "peak 1.4x mean");
}

}  // namespace
}  // namespace spillway::policy
