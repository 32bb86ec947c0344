// Failure injection 4 (priority skew), live: bench against `spillway serve`
// (live_failure_fixture.h). The simulator's version is tests/sim/failure_priority_test.cc.

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "failure/live_failure_fixture.h"

namespace spillway::failure_test {
namespace {

constexpr double kAgingS = 10;  // --priority-aging-s: seconds of waiting worth one class
constexpr double kTtftSloS = 1.0;

class LivePrioritySkewTest : public LiveFailureTest {
 protected:
  // Priority scheduling with the scenario's aging, and one API key per tenant: batch's key may
  // ask for class 1 at best. The request deadline is raised from 4.5 s to the scenario
  // client's total_timeout_s (20 s): at 4.5 s nearly every 128-token batch request is refused
  // as deadline_unreachable (128 x ~32 ms of decode alone is 4.1 s), which the simulator,
  // without that deadline, does not do.
  std::vector<std::string> ServerArgs() override {
    const std::string keys = dir_.Write("keys.yaml",
                                        "api_keys:\n"
                                        "  - {key: sk-interactive, tenant: interactive}\n"
                                        "  - {key: sk-batch, tenant: batch, max_priority: 1}\n");
    // The scenario's engine (priority scheduling, its deadline) with the keys' tenants.
    std::vector<std::string> args = ScenarioArgs("priority-skew");
    args.insert(args.end(), {"--config", keys, "--client-timeout-s", "25"});
    return args;
  }

  testing_util::TempDir dir_;
};

// Interactive p95 TTFT within the SLO; batch served in both phases within the aging bound;
// shedding falls on batch first; and no batch attempt, retries included, is served as
// interactive although every one asks for it.
TEST_F(LivePrioritySkewTest, InteractiveMeetsItsSloBatchIsServedAndABatchRetryCannotClimb) {
  Scenario sc = Shortened("priority-skew", 0.25);  // 10 s per phase
  ASSERT_EQ(sc.arrival.steps.size(), 2u);
  ASSERT_EQ(sc.classes.size(), 2u);
  RequestClass& interactive_class = sc.classes[0];
  RequestClass& batch_class = sc.classes[1];
  ASSERT_EQ(interactive_class.name, "interactive");
  ASSERT_EQ(batch_class.name, "batch");
  // Each class its own tenant and key; the batch client claims class 0, which its key caps
  // at 1. And retries (the shipped scenario has none), so that there are batch retries to
  // watch: backoff with jitter and a 20% budget, which adds load without a storm.
  interactive_class.tenant = "interactive";
  batch_class.tenant = "batch";
  batch_class.priority = 0;
  sc.client.retry = RetryPolicy::kBackoffJitter;
  sc.client.max_attempts = 3;
  sc.client.backoff_base_s = 1;
  sc.client.jitter_s = 0.5;
  sc.client.retry_budget = 0.2;
  api_key_ = "sk-interactive";
  loadgen::AddTenantKey("batch=sk-batch", &tenant_keys_);

  const LiveRun run = Bench(sc);
  const SkewClasses classes = SkewClassesOf(run);
  ASSERT_NE(classes.batch, nullptr);
  const ClassSummary& interactive = *classes.interactive;
  const ClassSummary& batch = *classes.batch;
  SCOPED_TRACE(testing::Message() << "interactive TTFT p95 " << interactive.ttft_s.p95
                                  << " s, batch TTFT p95 " << batch.ttft_s.p95 << " s, max "
                                  << batch.ttft_s.max << " s");

  // Live: 10% over the 1 s SLO for timer jitter and HTTP set-up on a loaded machine. The bound
  // is the SLO the test is about, not a measurement with a margin: measured 0.84 s, beside
  // another live failure test (GTEST_TOTAL_SHARDS=2).
  EXPECT_LE(interactive.ttft_s.p95, 1.1 * kTtftSloS);

  // Batch is not starved: completions in both phases (the simulator asks for a third of the
  // batch offered over the whole run; a 10 s live phase has only ~16 batch arrivals in the
  // second one, so here "some in each"), and no served batch request waited longer than the
  // aging bound plus the SLO, 10 s + 1 s. (Under predictive admission the queue-ingress
  // deadline, TTFT SLO - t_prefill, drops a request that would wait much longer than the SLO,
  // so this bound holds with room to spare; aging is what bounds it when nothing is dropped.)
  const std::array<std::int64_t, 2> batch_done =
      BatchCompletedPerPhase(run, sc.arrival.steps[0].duration_s);
  EXPECT_GT(batch_done[0], 0) << "no batch completion while batch was 90% of the load";
  EXPECT_GT(batch_done[1], 0) << "no batch completion while interactive was 90% of the load";
  EXPECT_LE(batch.ttft_s.max, kAgingS + kTtftSloS);

  // Shedding falls on the lower class first.
  const auto shed = [](const ClassSummary& c) {
    return static_cast<double>(c.rejected + c.dropped) / static_cast<double>(c.offered);
  };
  EXPECT_LT(shed(interactive), shed(batch));

  // A batch retry cannot climb: every batch attempt asked for class 0 and every one the server
  // answered with X-Priority-Class (each admitted one) ran as class 1; interactive ran as 0.
  int batch_retries_admitted = 0;
  for (const json::object& r : run.records) {
    const bool is_batch = r.at("class").as_string() == "batch";
    EXPECT_EQ(r.at("priority_requested").to_number<std::int64_t>(), 0) << json::serialize(r);
    if (r.at("status").to_number<int>() != 200) {
      continue;
    }
    ASSERT_FALSE(r.at("priority_class").is_null()) << json::serialize(r);
    EXPECT_EQ(r.at("priority_class").to_number<std::int64_t>(), is_batch ? 1 : 0)
        << json::serialize(r);
    if (is_batch && r.at("attempt").to_number<int>() > 1) {
      ++batch_retries_admitted;
    }
  }
  EXPECT_GT(batch_retries_admitted, 0) << "no admitted batch retry to check";
}

}  // namespace
}  // namespace spillway::failure_test
