// Failure injection 5 (cancellation) and 7 (drain under load), live: bench against
// `spillway serve` (live_failure_fixture.h).

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>

#include "common/server_fixture.h"
#include "failure/live_failure_fixture.h"

namespace spillway::failure_test {
namespace {

// --- 5. Cancellation ---------------------------------------------------------------------------

using server_test::MetricSum;
using server_test::ModelLabel;

class LiveCancellationTest : public LiveFailureTest {
 protected:
  std::vector<std::string> ServerArgs() override {
    // The naive queue, so clients leave from the queue as well as mid-stream; the scenario's
    // deadline is long enough for its 1000-token requests to be admitted at all.
    std::vector<std::string> args = ScenarioArgs("cancellation");
    args.insert(args.end(), {"--policy", "unbounded", "--client-timeout-s", "90"});
    return args;
  }
};

TEST_F(LiveCancellationTest, EngineStopsWorkingForClientsThatLeftAndReturnsToIdle) {
  const LiveRun run = Bench(Shortened("cancellation", 0.15));  // 9 s at 40 req/s
  const RunSummary& s = run.result.summary;
  EXPECT_GT(s.abandoned_after_admission, 300);
  EXPECT_GT(s.ttft_s.count, 20) << "clients that left mid-stream";
  // Running, waiting and KV usage are back to idle within one scrape interval (1 s) of the
  // last client leaving (the bench returns once every client is gone).
  bool idle = false;
  const std::string text = PollMetrics(
      [](const std::string& m) {
        return MetricSum(m, "vllm:num_requests_running", ModelLabel()) == 0 &&
               MetricSum(m, "vllm:num_requests_waiting", ModelLabel()) == 0 &&
               MetricSum(m, "vllm:kv_cache_usage_perc", ModelLabel()) == 0;
      },
      1.0, &idle);
  EXPECT_TRUE(idle) << text;
  // Engine time on requests whose client had gone, beyond the iteration in flight when the
  // server saw the disconnect: the server counts it in spillway_wasted_engine_seconds_total.
  // Live, a disconnect is seen a few milliseconds late, so allow 2% of busy time.
  const double wasted = MetricSum(text, "spillway_wasted_engine_seconds_total");
  const double busy = MetricSum(text, "spillway_engine_busy_seconds_total");
  ASSERT_GT(busy, 1.0);
  EXPECT_LE(wasted, 0.02 * busy) << "wasted " << wasted << " s of " << busy << " s";
}

// --- 7. Drain under load -----------------------------------------------------------------------

class LiveDrainTest : public LiveFailureTest {
 protected:
  std::vector<std::string> ServerArgs() override { return {"--drain-timeout-s", "10"}; }
};

TEST_F(LiveDrainTest, SigtermDuringABurstLosesNothingAdmittedAndRefusesNewWorkWith503) {
  Scenario sc = LoadScenario(std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/seed-burst-short.yaml");
  const pid_t pid = server().pid();
  std::jthread terminator([pid] {
    std::this_thread::sleep_for(std::chrono::seconds(15));  // in the middle of the burst
    ::kill(pid, SIGTERM);
  });
  const LiveRun run =
      Bench(sc, /*duration_limit_s=*/25, "drain");  // the server is gone after ~20 s
  terminator.join();
  int draining = 0;
  for (const json::object& r : run.records) {
    const std::string outcome(r.at("outcome").as_string());
    const std::int64_t status = r.at("status").to_number<std::int64_t>();
    // An admitted request (a 200 head) either completed or ended with an explicit error event;
    // none is cut without an answer (a transport error after the head).
    if (status == 200) {
      EXPECT_NE(outcome, "transport_error") << json::serialize(r);
    }
    if (status == 503 && r.at("reason").as_string() == "draining") {
      ++draining;
    }
  }
  EXPECT_GT(draining, 0) << "no request was refused with 503 draining";
  EXPECT_GT(run.result.summary.completed, 0);
}

}  // namespace
}  // namespace spillway::failure_test
