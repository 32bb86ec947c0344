// Policy values measured by runs (src/policy/run_evidence.h): the wasted cost under naive FIFO
// from an unbounded run's not-completed engine time, and a cascade's fallback model and TTFT,
// each with its run as evidence, and the errors of a run that cannot say them.

#include "policy/run_evidence.h"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/config_error_of.h"
#include "policy/policy_test_util.h"

namespace spillway::policy {
namespace {

using policy_test::NaiveRun;
using testing_util::ErrorOf;

TEST(RunEvidenceTest, TheWastedCostUnderNaiveFifoIsTheUnboundedRunsNotCompletedEngineTime) {
  const std::vector<RunSummary> runs = {NaiveRun("predictive"), NaiveRun("unbounded")};
  // At the run's own price ($3.6/h: $0.001 a second), and at the policy's when init has one.
  WastedCost w = NaiveFifoWastedCost(runs, "runs.json", std::nullopt);
  EXPECT_DOUBLE_EQ(w.usd, 0.02);
  EXPECT_EQ(w.evidence.run, "runs.json");
  EXPECT_EQ(w.evidence.command, runs[1].command);
  EXPECT_EQ(w.evidence.at, "2026-12-05T13:00:00Z");
  EXPECT_EQ(w.evidence.profile, "seed-a100-7b");
  EXPECT_DOUBLE_EQ(NaiveFifoWastedCost(runs, "runs.json", 7.2).usd, 0.04);

  const auto error = [](const std::vector<RunSummary>& rs) {
    return ErrorOf([&] { NaiveFifoWastedCost(rs, "runs.json", std::nullopt); });
  };
  EXPECT_NE(error({NaiveRun("predictive")}).find("holds no run of policy unbounded"),
            std::string::npos);
  RunSummary unmeasured = NaiveRun("unbounded");
  unmeasured.not_completed_engine_s.reset();  // bench without the server's /metrics
  EXPECT_NE(error({unmeasured}).find("were not measured"), std::string::npos);
  RunSummary unpriced = NaiveRun("unbounded@round-robin");
  unpriced.gpu_hour_usd.reset();
  EXPECT_NE(error({unpriced}).find("no GPU price"), std::string::npos);
  RunSummary old = NaiveRun("unbounded");
  old.command.clear();
  EXPECT_NE(error({old}).find("does not say its command"), std::string::npos);
}

// A cascade run as fleet --json writes it: the 7B model requested, a 1B fallback and a second,
// smaller one.
RunSummary CascadeRun() {
  RunSummary r;
  r.source = "bench";
  r.policy = "cascade";
  r.profile = "llama-2-7b";
  r.command = "spillway fleet --scenario cascade.yaml --json cascade.json";
  r.started_at = "2026-12-05T13:36:20Z";
  r.served_model["llama-2-7b"].completed = 754;
  r.served_model["llama-2-7b"].ttft_s.p95 = 0.85;
  r.served_model["llama-2-7b"].ttft_s.count = 754;
  r.served_model["llama-3.2-1b"].completed = 595;
  r.served_model["llama-3.2-1b"].ttft_s.p95 = 0.016;
  r.served_model["llama-3.2-1b"].ttft_s.count = 595;
  r.served_model["tiny"].completed = 3;
  r.served_model["tiny"].ttft_s.count = 3;
  return r;
}

TEST(RunEvidenceTest, TheFallbackIsTheModelOtherThanTheRequestedOneThatCompletedMost) {
  const FallbackTtft f = CascadeFallbackTtft({NaiveRun("predictive"), CascadeRun()}, "c.json");
  EXPECT_EQ(f.model, "llama-3.2-1b");
  EXPECT_DOUBLE_EQ(f.ttft_p95_s, 0.016);
  EXPECT_EQ(f.completed, 595);
  EXPECT_EQ(f.evidence.run, "c.json");
  EXPECT_EQ(f.evidence.at, "2026-12-05T13:36:20Z");
  EXPECT_EQ(f.evidence.profile, "") << "measured from outside: the engine's profile is unknown";

  EXPECT_NE(ErrorOf([] {
              CascadeFallbackTtft({NaiveRun("unbounded")}, "c.json");
            }).find("c.json: holds no run a fallback model served"),
            std::string::npos);
  RunSummary old = CascadeRun();
  old.served_model["llama-3.2-1b"].ttft_s.count = 0;  // a summary written before it
  EXPECT_NE(ErrorOf([&] { CascadeFallbackTtft({old}, "c.json"); }).find("was not recorded"),
            std::string::npos);
}

}  // namespace
}  // namespace spillway::policy
