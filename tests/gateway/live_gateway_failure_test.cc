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

}  // namespace
}  // namespace spillway::gateway_test
