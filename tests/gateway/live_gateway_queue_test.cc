// The gateway's wait queue, live (`spillway gateway --queue-max-wait-s`, one `spillway serve`
// upstream on loopback). The upstream's /metrics is stalled with serve's fault flag and the
// gateway runs fail-close, so it counts the endpoint saturated: a request cannot be routed and
// waits in the queue. Pass criteria: it goes (200) as soon as a fresh scrape shows the slot;
// its wait runs out as 429 queue_deadline_exceeded with Retry-After; a client that leaves
// while waiting leaves the queue at once (499 in the metrics); a drain answers those waiting
// 503 draining at once; and the ledger balances.

#include <csignal>
#include <string>
#include <vector>

#include "gateway/gateway_fixture.h"

namespace spillway::gateway_test {
namespace {

using server_test::IsOpenAiError;
using server_test::PendingRequest;
using server_test::SmallCompletionBody;

class LiveGatewayQueueTest : public GatewayFixture {
 protected:
  int upstreams() const override { return 1; }
  std::vector<std::string> UpstreamArgs(int) const override {
    return {"--fault-metrics-stall-on-sigusr1"};
  }
  std::vector<std::string> GatewayArgs() const override {
    return {"--staleness",  "fail-close", "--queue-max-wait-s",  QueueWait(),
            "--ttft-slo-s", "4",          "--request-timeout-s", "6"};
  }
  virtual std::string QueueWait() const { return "3"; }

  /// Each SIGUSR1 toggles the stall of the upstream's /metrics; waits until the gateway sees
  /// the endpoint as `stale`.
  void ToggleStall(bool stale) {
    upstream(0).Signal(SIGUSR1);
    ASSERT_TRUE(Eventually(
        [&] { return MetricSum(GatewayMetrics(), "spillway_gateway_endpoint_stale") == stale; },
        3.0));
  }
  double Queued() const { return MetricSum(GatewayMetrics(), "spillway_gateway_queued"); }
  static server_test::HttpRequest Completion() {
    server_test::HttpRequest req;
    req.method = "POST";
    req.target = "/v1/completions";
    req.body = SmallCompletionBody(2);
    return req;
  }
};

TEST_F(LiveGatewayQueueTest, AWaitingRequestGoesAsSoonAsAFreshScrapeShowsASlot) {
  ToggleStall(true);
  PendingRequest pending(gateway().port(), Completion(), 10);
  ASSERT_TRUE(pending.ok()) << pending.error();
  ASSERT_TRUE(Eventually([&] { return Queued() == 1; }, 1.0));
  EXPECT_FALSE(pending.ResponseStarted()) << "it waits: no answer yet";
  upstream(0).Signal(SIGUSR1);  // the stall ends: the next scrape (0.25 s) shows a free slot
  const server_test::HttpResponse r = pending.ReadResponse(2.5);  // before its 3 s wait ends
  EXPECT_EQ(r.status, 200) << r.error << r.body;
  // The gateway counts the completion once it has finished the reply, which the client may
  // have read a moment before (seen once in CI: 0 at the first scrape).
  EXPECT_TRUE(Eventually(
      [&] { return MetricSum(GatewayMetrics(), "spillway_gateway_completed_total") == 1; }, 1.0));
  const std::string m = GatewayMetrics();
  EXPECT_EQ(MetricSum(m, "spillway_gateway_queued"), 0);
  EXPECT_EQ(MetricSum(m, "spillway_gateway_queue_wait_seconds_count"), 1);
}

TEST_F(LiveGatewayQueueTest, AClientThatLeavesWhileWaitingLeavesTheQueue) {
  ToggleStall(true);
  PendingRequest pending(gateway().port(), Completion(), 10);
  ASSERT_TRUE(pending.ok()) << pending.error();
  ASSERT_TRUE(Eventually([&] { return Queued() == 1; }, 1.0));
  pending.Close();
  // Within well under its 3 s wait: the gateway watches the client's socket while it waits.
  EXPECT_TRUE(Eventually([&] { return Queued() == 0; }, 1.0));
  const std::string m = GatewayMetrics();
  EXPECT_EQ(MetricSum(m, "spillway_gateway_cancelled_total"), 1);
  EXPECT_EQ(MetricSum(m, "spillway_gateway_requests_total", {{"status", "499"}}), 1);
  EXPECT_EQ(MetricSum(m, "spillway_gateway_forwarded_total"), 0) << "nothing was sent";
  ToggleStall(false);
}

TEST_F(LiveGatewayQueueTest, ADrainAnswersThoseWaiting503DrainingAtOnce) {
  ToggleStall(true);
  PendingRequest pending(gateway().port(), Completion(), 10);
  ASSERT_TRUE(pending.ok()) << pending.error();
  ASSERT_TRUE(Eventually([&] { return Queued() == 1; }, 1.0));
  const auto sent = std::chrono::steady_clock::now();
  gateway_process().Signal(SIGTERM);
  const server_test::HttpResponse r = pending.ReadResponse(2.5);  // well before its 3 s wait
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  EXPECT_TRUE(IsOpenAiError(r, 503, "draining")) << r.error << r.body;
  EXPECT_EQ(r.Header("X-Overload-Reason"), "draining");
  EXPECT_LT(took_s, 1.0) << "answered at the drain's start, not at the end of its wait";
}

class LiveGatewayShortQueueTest : public LiveGatewayQueueTest {
 protected:
  std::string QueueWait() const override { return "0.5"; }
};

TEST_F(LiveGatewayShortQueueTest, ItsWaitRunsOutAs429QueueDeadlineExceeded) {
  ToggleStall(true);
  const auto sent = std::chrono::steady_clock::now();
  const server_test::HttpResponse r = gateway().Post("/v1/completions", SmallCompletionBody(2));
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  EXPECT_TRUE(IsOpenAiError(r, 429, "queue_deadline_exceeded"));
  EXPECT_EQ(r.Header("X-Overload-Reason"), "queue_deadline_exceeded");
  EXPECT_EQ(r.Header("x-llm-d-request-dropped-reason"), "rejected-ttl-expired");
  EXPECT_TRUE(r.Header("Retry-After").has_value());
  // It waited its 0.5 s (the timer), and not much longer: 1.5 s is a 1 s margin for a loaded
  // machine (measured: 0.50-0.51 s).
  EXPECT_GE(took_s, 0.49);
  EXPECT_LT(took_s, 1.5);
  const std::string m = GatewayMetrics();
  EXPECT_EQ(MetricSum(m, "spillway_gateway_shed_total"), 1);
  EXPECT_EQ(MetricSum(m, "spillway_gateway_requests_total",
                      {{"status", "429"}, {"reason", "queue_deadline_exceeded"}}),
            1);
  ToggleStall(false);
}

}  // namespace
}  // namespace spillway::gateway_test
