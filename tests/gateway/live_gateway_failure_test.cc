// Endpoint faults behind `spillway gateway` (three `spillway serve` upstreams on loopback):
// one killed, one drained, all down. Each test states its pass criterion.

#include <csignal>
#include <thread>

#include "gateway/gateway_fixture.h"

namespace spillway::gateway_test {
namespace {

using server_test::IsOpenAiError;
using server_test::PendingRequest;
using server_test::SmallCompletionBody;
using server_test::SseDataPayloads;

class LiveGatewayFailureTest : public GatewayFixture {};

// Killed (SIGKILL): every request is answered (200 after a retry elsewhere, or 503
// upstream_unavailable) within 2 s, none hangs, and the probes mark the endpoint down within
// 2 s (probe interval 0.5 s, 1 s probe timeout), after which every request is 200.
TEST_F(LiveGatewayFailureTest, AKilledEndpointIsRetriedElsewhereThenMarkedDown) {
  upstream(1).Signal(SIGKILL);
  int ok = 0;
  for (int i = 0; i < 20; ++i) {
    const auto sent = std::chrono::steady_clock::now();
    const HttpResponse r = gateway().Post("/v1/completions", SmallCompletionBody(2), {}, 5);
    const double took_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
    EXPECT_LT(took_s, 2.0) << "request " << i;
    if (r.status == 200) {
      ++ok;
    } else {
      EXPECT_TRUE(IsOpenAiError(r, 503, "upstream_unavailable")) << "request " << i;
      EXPECT_EQ(r.Header("X-Overload-Reason"), "upstream_unavailable");
    }
  }
  EXPECT_GE(ok, 17) << "a refused connection is retried on another endpoint";
  EXPECT_TRUE(Eventually([&] { return EndpointState(1, "down") == 1; }, 2.0));
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(gateway().Post("/v1/completions", SmallCompletionBody(2)).status, 200);
  }
  EXPECT_GE(MetricSum(GatewayMetrics(), "spillway_gateway_retries_total"), 1);
}

// Killed mid-stream: the streams it was relaying end with an SSE error event
// (upstream_unavailable), never as if complete; the others end with [DONE].
TEST_F(LiveGatewayFailureTest, StreamsOfAKilledEndpointEndWithAnErrorEvent) {
  server_test::HttpRequest req;
  req.method = "POST";
  req.target = "/v1/completions";
  req.body = R"({"prompt":[1,2,3],"max_tokens":100,"stream":true})";  // about 3 s
  std::vector<std::unique_ptr<PendingRequest>> streams;
  for (int i = 0; i < 6; ++i) {
    streams.push_back(std::make_unique<PendingRequest>(gateway().port(), req, 10));
    ASSERT_EQ(streams.back()->ReadHead(5).status, 200);
    ASSERT_TRUE(streams.back()->NextEvent(5).has_value());
  }
  // Kill the engine running the most of them.
  int busiest = 0;
  double most = -1;
  for (int i = 0; i < upstreams(); ++i) {
    const double running =
        MetricSum(upstream_client(i).Get("/metrics").body, "vllm:num_requests_running");
    if (running > most) {
      most = running;
      busiest = i;
    }
  }
  ASSERT_GE(most, 1);
  upstream(busiest).Signal(SIGKILL);
  int broken = 0;
  for (auto& s : streams) {
    const HttpResponse r = s->ReadResponse(10);
    const std::vector<std::string> events = SseDataPayloads(r.body);
    ASSERT_FALSE(events.empty()) << r.error;
    if (events.back() != "[DONE]") {
      EXPECT_NE(events.back().find("\"code\":\"upstream_unavailable\""), std::string::npos)
          << events.back();
      ++broken;
    }
  }
  EXPECT_EQ(broken, static_cast<int>(most));
  EXPECT_EQ(MetricSum(GatewayMetrics(), "spillway_gateway_requests_total",
                      {{"reason", "upstream_unavailable"}}),
            most);
}

// Drained (SIGTERM): the streams it runs finish with [DONE]; new requests go to the other two;
// no admitted request is lost.
TEST_F(LiveGatewayFailureTest, ADrainedEndpointFinishesItsStreamsAndGetsNoNewWork) {
  server_test::HttpRequest req;
  req.method = "POST";
  req.target = "/v1/completions";
  req.body = R"({"prompt":[1,2,3],"max_tokens":40,"stream":true})";  // about 1.3 s
  std::vector<std::unique_ptr<PendingRequest>> streams;
  for (int i = 0; i < 6; ++i) {
    streams.push_back(std::make_unique<PendingRequest>(gateway().port(), req, 10));
    ASSERT_TRUE(streams.back()->ok());
  }
  for (auto& s : streams) {
    ASSERT_EQ(s->ReadHead(5).status, 200);
  }
  const double sent_to_0 = MetricSum(GatewayMetrics(), "spillway_gateway_forwarded_total",
                                     {{"endpoint", Url(upstream(0))}});
  upstream(0).Signal(SIGTERM);
  ASSERT_TRUE(Eventually(
      [&] { return EndpointState(0, "draining") == 1 || EndpointState(0, "down") == 1; }, 2.0));
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(gateway().Post("/v1/completions", SmallCompletionBody(2)).status, 200);
  }
  for (auto& s : streams) {
    const HttpResponse r = s->ReadResponse(10);
    const std::vector<std::string> events = SseDataPayloads(r.body);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back(), "[DONE]") << r.body;
    EXPECT_EQ(r.body.find("\"error\""), std::string::npos) << r.body;
  }
  const std::string m = GatewayMetrics();
  EXPECT_EQ(MetricSum(m, "spillway_gateway_forwarded_total", {{"endpoint", Url(upstream(0))}}),
            sent_to_0)
      << "nothing new went to the draining endpoint";
  EXPECT_EQ(MetricSum(m, "spillway_gateway_failed_total"), 0);
  EXPECT_EQ(MetricSum(m, "spillway_gateway_completed_total"), 16);
}

// All endpoints down: 503 no_endpoint at once, with Retry-After and X-Overload-Reason; /ready
// fails.
TEST_F(LiveGatewayFailureTest, NoEndpointLeftIs503NoEndpoint) {
  for (int i = 0; i < upstreams(); ++i) {
    upstream(i).Signal(SIGKILL);
  }
  ASSERT_TRUE(Eventually(
      [&] {
        return EndpointState(0, "down") + EndpointState(1, "down") + EndpointState(2, "down") == 3;
      },
      3.0));
  const auto sent = std::chrono::steady_clock::now();
  const HttpResponse r = gateway().Post("/v1/completions", SmallCompletionBody());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count(), 0.5);
  EXPECT_TRUE(IsOpenAiError(r, 503, "no_endpoint"));
  EXPECT_EQ(r.Header("X-Overload-Reason"), "no_endpoint");
  EXPECT_EQ(r.Header("Retry-After"), "1");
  EXPECT_EQ(gateway().Get("/ready").status, 503);
  EXPECT_EQ(MetricSum(GatewayMetrics(), "spillway_gateway_shed_total"), 1);
}

// Metrics stale (every upstream's GET /metrics stalled by SIGUSR1, serve's fault flag): the
// gateway marks them stale once older than stale_after_s (1 s) and, per its staleness mode,
// keeps routing on its own counts (fail-open: every request 200) or counts them saturated
// (fail-close: 429 queue_delay_exceeded); when the stall ends they are fresh again.
class LiveGatewayStaleTest : public GatewayFixture {
 protected:
  std::vector<std::string> UpstreamArgs(int) const override {
    return {"--fault-metrics-stall-on-sigusr1"};
  }
  void StallMetrics() {
    for (int i = 0; i < upstreams(); ++i) {
      upstream(i).Signal(SIGUSR1);
    }
  }
  double Stale() const { return MetricSum(GatewayMetrics(), "spillway_gateway_endpoint_stale"); }
};

TEST_F(LiveGatewayStaleTest, FailOpenKeepsRoutingOnItsOwnCounts) {
  StallMetrics();
  ASSERT_TRUE(Eventually([&] { return Stale() == 3; }, 3.0));
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(gateway().Post("/v1/completions", SmallCompletionBody(2)).status, 200);
  }
  StallMetrics();  // the stall ends
  EXPECT_TRUE(Eventually([&] { return Stale() == 0; }, 3.0));
}

class LiveGatewayStaleFailCloseTest : public LiveGatewayStaleTest {
 protected:
  std::vector<std::string> GatewayArgs() const override { return {"--staleness", "fail-close"}; }
};

TEST_F(LiveGatewayStaleFailCloseTest, FailCloseCountsStaleEndpointsSaturated) {
  ASSERT_EQ(gateway().Post("/v1/completions", SmallCompletionBody(2)).status, 200);
  StallMetrics();
  ASSERT_TRUE(Eventually([&] { return Stale() == 3; }, 3.0));
  const HttpResponse r = gateway().Post("/v1/completions", SmallCompletionBody(2));
  EXPECT_TRUE(IsOpenAiError(r, 429, "queue_delay_exceeded"));
  EXPECT_EQ(r.Header("X-Overload-Reason"), "queue_delay_exceeded");
  StallMetrics();
  ASSERT_TRUE(Eventually([&] { return Stale() == 0; }, 3.0));
  EXPECT_EQ(gateway().Post("/v1/completions", SmallCompletionBody(2)).status, 200);
}

}  // namespace
}  // namespace spillway::gateway_test
