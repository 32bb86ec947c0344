// `spillway policy init`: a draft from a capacity run and the reference scenario carries the
// reference policy's measured, physical and derived values with their sources, reads back, and
// checks without an error; the command refuses a run without provenance, a run of another
// profile, and an existing --out.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "admission/admission.h"
#include "common/run_command.h"
#include "common/temp_dir.h"
#include "common/text_file.h"
#include "policy/policy_check.h"
#include "policy/policy_init.h"
#include "policy/policy_reader.h"
#include "policy/policy_test_util.h"
#include "report/summary_json.h"
#include "sim/capacity.h"
#include "sim/run_config.h"

namespace spillway::policy {
namespace {

const std::string kInitSource = SPILLWAY_SOURCE_DIR;

CapacityRun ReferenceRun() {
  CapacityRun run;
  run.file = "out/policy/capacity.json";
  run.mu_rps = 10.34;
  run.binding_slo = "ttft";
  run.scenario = "scenarios/seed-burst.yaml";
  run.profile = "seed-a100-7b";
  run.engine = "spillway emulated executor";
  run.command =
      "spillway sim --scenario scenarios/seed-burst.yaml --measure-capacity --json "
      "out/policy/capacity.json";
  run.measured_at = "2026-12-05T01:01:00Z";
  return run;
}

TEST(PolicyInitTest, TheDraftCarriesTheReferencePolicysValuesAndChecksWithoutAnError) {
  const Scenario scenario = LoadScenario(kInitSource + "/scenarios/seed-burst.yaml");
  const EngineConfig engine =
      ResolveRunConfig(scenario, AdmissionPolicy::kForecast, kInitSource + "/profiles");
  InitInputs in;
  in.run = ReferenceRun();
  in.scenario = &scenario;
  in.scenario_path = "scenarios/seed-burst.yaml";
  in.engine = &engine;
  const Policy draft = ReadPolicyString(InitPolicyYaml(in), "draft.yaml");
  const Policy reference = ReadPolicyFile(kInitSource + "/policies/reference.yaml");
  for (const char* path : {"model.weight_bytes",
                           "model.gpu_memory_bytes",
                           "model.kv_bytes_per_token",
                           "model.max_prompt_tokens",
                           "workload.base_rate_rps",
                           "workload.burst_rate_rps",
                           "workload.burst_duration_s",
                           "slo.ttft_p95_s",
                           "slo.tpot_p95_s",
                           "slo.e2e_p99_s",
                           "slo.goodput_share",
                           "capacity.single_replica_mu_rps",
                           "engine.max_num_seqs",
                           "engine.max_num_batched_tokens",
                           "admission.kv_headroom",
                           "timeouts.client_s",
                           "timeouts.gateway_s",
                           "timeouts.queue_ingress_s",
                           "cascade.clamp_max_tokens",
                           "retry.max_retries",
                           "observability.goodput_share_of_mu"}) {
    ASSERT_NE(draft.Find(path), nullptr) << path;
    EXPECT_DOUBLE_EQ(*draft.Number(path), *reference.Number(path)) << path;
  }
  EXPECT_EQ(draft.Find("capacity.binding_slo")->text, "ttft");
  const Value* mu = draft.Find("capacity.single_replica_mu_rps");
  EXPECT_EQ(mu->source.kind, SourceKind::kMeasured);
  EXPECT_EQ(mu->source.measured.run, "out/policy/capacity.json");
  EXPECT_EQ(mu->source.measured.profile, "seed-a100-7b");
  EXPECT_EQ(draft.Find("model.kv_bytes_per_token")->source.kind, SourceKind::kBound);
  EXPECT_NE(draft.Find("model.kv_bytes_per_token")->source.text.find("2 (K and V) x 32 layers"),
            std::string::npos);
  EXPECT_EQ(draft.Find("engine.max_num_seqs")->source.kind, SourceKind::kBound);
  EXPECT_EQ(*draft.Number("cost.gpu_hour_usd"), 0);

  const std::vector<Finding> findings = CheckPolicy(draft, *ParseDay("2026-12-05"));
  EXPECT_FALSE(HasError(findings));
  bool price_warned = false;
  for (const Finding& f : findings) {
    price_warned = price_warned || f.where.find("cost.gpu_hour_usd") != std::string::npos;
  }
  EXPECT_TRUE(price_warned);
}

TEST(PolicyInitTest, TheBindingSloIsTheOneTheSlowestFailingProbeBroke) {
  CapacityResult r;
  r.mu_rps = 10;
  r.probes = {
      {10, 1.0, 0.9, 0.030, true}, {20, 0.9, 3.0, 0.050, false}, {11, 1.0, 1.2, 0.030, false}};
  EXPECT_EQ(BindingSlo(r, 1.0, 0.035), "ttft");
  r.probes[2] = {11, 1.0, 0.9, 0.036, false};
  EXPECT_EQ(BindingSlo(r, 1.0, 0.035), "tpot");
  r.probes = {{10, 1.0, 0.9, 0.030, true}};
  EXPECT_EQ(BindingSlo(r, 1.0, 0.035), "neither");
}

// The reference capacity run (mu 10.34 req/s, TTFT bound) as sim --measure-capacity writes it.
CapacityResult ReferenceCapacity() {
  CapacityResult result;
  result.mu_rps = 10.34;
  result.probes = {{10.34, 1.0, 0.99, 0.03, true}, {10.5, 1.0, 1.02, 0.03, false}};
  return result;
}
const CapacityProvenance kReferenceProvenance{"scenarios/seed-burst.yaml",
                                              "seed-a100-7b",
                                              "spillway emulated executor",
                                              "spillway sim ...",
                                              "2026-12-05T01:01:00Z",
                                              1.0,
                                              0.035};

TEST(PolicyInitTest, TheCommandWritesADraftAndRefusesBadRunsAndAnExistingOut) {
  const testing_util::TempDir tmp;
  const CapacityResult result = ReferenceCapacity();
  const CapacityProvenance& from = kReferenceProvenance;
  const std::string run = tmp.Write("capacity.json", CapacityToJson(result, from));
  const std::string out = (tmp.path() / "draft.yaml").string();
  const std::string scenario = kInitSource + "/scenarios/seed-burst.yaml";
  const auto init = [&](const std::string& run_file, const std::string& sc) {
    return testing_util::RunCommand({SPILLWAY_BINARY, "policy", "init", "--calibration", run_file,
                                     "--scenario", sc, "--out", out, "--gpu-hour-usd", "5.12"},
                                    60);
  };
  const testing_util::CommandResult ok = init(run, scenario);
  ASSERT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("mu 10.34 req/s (ttft bound)"), std::string::npos) << ok.output;
  EXPECT_EQ(*ReadPolicyFile(out).Number("cost.gpu_hour_usd"), 5.12);
  const testing_util::CommandResult again = init(run, scenario);
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.output.find("exists; give --force"), std::string::npos) << again.output;
  std::filesystem::remove(out);

  const std::string old = tmp.Write("old.json", "{\"mu_rps\": 10.3, \"probes\": []}\n");
  const testing_util::CommandResult no_provenance = init(old, scenario);
  EXPECT_EQ(no_provenance.exit_code, 2);
  EXPECT_NE(no_provenance.output.find("no \"at_search_ceiling\""), std::string::npos)
      << no_provenance.output;
  std::string bad_binding = CapacityToJson(result, from);
  bad_binding.replace(bad_binding.find("\"ttft\""), 6, "\"ttft\\\"\\nx: [\"");
  const testing_util::CommandResult injected = init(tmp.Write("bad.json", bad_binding), scenario);
  EXPECT_EQ(injected.exit_code, 2) << injected.output;
  EXPECT_NE(injected.output.find("\"binding_slo\" must be ttft, tpot or neither"),
            std::string::npos)
      << injected.output;
  const testing_util::CommandResult onto_input =
      testing_util::RunCommand({SPILLWAY_BINARY, "policy", "init", "--calibration", run,
                                "--scenario", scenario, "--out", run, "--force"},
                               60);
  EXPECT_EQ(onto_input.exit_code, 2);
  EXPECT_NE(onto_input.output.find("an input the policy cites"), std::string::npos)
      << onto_input.output;
  const testing_util::CommandResult other = init(run, kInitSource + "/scenarios/azure-conv.yaml");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.output.find("measured on profile seed-a100-7b"), std::string::npos)
      << other.output;
}

TEST(PolicyInitTest, ANaiveRunFillsTheWastedCostAsAMeasurementTheCheckAccepts) {
  using policy_test::NaiveRun;
  testing_util::TempDir tmp;
  const std::string run =
      tmp.Write("capacity.json", CapacityToJson(ReferenceCapacity(), kReferenceProvenance));
  const std::string naive = tmp.Write("runs.json", SummaryToJson(NaiveRun("unbounded")));
  const std::string out = (tmp.path() / "draft.yaml").string();
  const testing_util::CommandResult r =
      testing_util::RunCommand({SPILLWAY_BINARY, "policy", "init", "--calibration", run,
                                "--scenario", kInitSource + "/scenarios/seed-burst.yaml", "--out",
                                out, "--gpu-hour-usd", "5.12", "--naive-run", naive},
                               60);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("wasted under naive FIFO $0.0284 (20.0 engine s over a 60 s run)"),
            std::string::npos)
      << r.output;
  const Policy p = ReadPolicyFile(out);
  const Value* wasted = p.Find("cost.wasted_usd_naive_fifo");
  ASSERT_NE(wasted, nullptr);
  EXPECT_NEAR(wasted->number, 20 * 5.12 / 3600, 1e-6);  // at the policy's price
  EXPECT_EQ(wasted->source.kind, SourceKind::kMeasured);
  EXPECT_EQ(wasted->source.measured.run, naive);
  EXPECT_EQ(wasted->source.measured.at, "2026-12-05T13:00:00Z");
  // A file that is not a run summary is a usage error naming it.
  const std::string not_runs = tmp.Write("x.json", "[1, 2]\n");
  const testing_util::CommandResult bad =
      testing_util::RunCommand({SPILLWAY_BINARY, "policy", "init", "--calibration", run,
                                "--scenario", kInitSource + "/scenarios/seed-burst.yaml", "--out",
                                out, "--force", "--naive-run", not_runs},
                               60);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--naive-run: "), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace spillway::policy
