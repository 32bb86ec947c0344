// Fair shedding at the live gateway (`spillway gateway --fair-share-min-ratio`): a flow (the
// x-gateway-inference-fairness-id header, else the tenant) that an endpoint refused for load
// contends; a flow served above r x its offered share meanwhile gets 429 fair_share from the
// gateway itself, without reaching the endpoint. The same routing::Pool the simulator drives.

#include <atomic>
#include <boost/asio/write.hpp>
#include <string>
#include <vector>

#include "api/openai_types.h"
#include "gateway/gateway_fixture.h"
#include "gateway/scripted_upstream.h"

namespace spillway::gateway_test {
namespace {

namespace asio = boost::asio;
using server_test::IsOpenAiError;
using server_test::SmallCompletionBody;

/// The endpoint's second POST (on any connection) is refused for load; the others answered.
std::string Overloaded() {
  const std::string body =
      R"({"error":{"message":"overloaded","type":"rate_limit_error","param":null,)"
      R"("code":"queue_delay_exceeded"}})";
  return "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
         "X-Overload-Reason: queue_delay_exceeded\r\nRetry-After: 1\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

class LiveGatewayFairShareTest : public GatewayFixture {
 protected:
  LiveGatewayFairShareTest()
      : scripted_([this](ScriptedUpstream::tcp::socket& s, int) {
          boost::system::error_code ignored;
          const std::string answer = ++posts_ == 2 ? Overloaded() : Answer200(kCompletionJson);
          asio::write(s, asio::buffer(answer), ignored);
        }) {}
  int upstreams() const override { return 0; }
  std::vector<std::string> GatewayArgs() const override {
    return {"--endpoint",
            "openai=http://127.0.0.1:" + std::to_string(scripted_.port()),
            "--model",
            "scripted",
            "--fair-share-min-ratio",
            "0.5"};
  }
  HttpResponse Ask(const std::string& flow) const {
    return gateway().Post("/v1/completions", SmallCompletionBody(),
                          {{std::string(api::kFairnessIdHeader), flow}});
  }

  std::atomic<int> posts_{0};
  ScriptedUpstream scripted_;
};

TEST_F(LiveGatewayFairShareTest, AnOverServedFlowYieldsToOneTheEndpointRefusedForLoad) {
  EXPECT_EQ(Ask("chat").status, 200);
  const HttpResponse docs = Ask("docs");
  ASSERT_TRUE(IsOpenAiError(docs, 429, "queue_delay_exceeded")) << "the endpoint's, passed on";
  // docs: half the offered, none served, refused for load: starved; chat is above its half.
  const HttpResponse chat = Ask("chat");
  EXPECT_TRUE(IsOpenAiError(chat, 429, "fair_share")) << chat.body;
  EXPECT_EQ(chat.Header("X-Overload-Reason"), "fair_share");
  EXPECT_EQ(chat.Header("Retry-After"), "1");
  EXPECT_EQ(posts_, 2) << "refused by the gateway, not sent";
  EXPECT_EQ(Ask("docs").status, 200) << "the starved flow is sent";
  const std::string m = GatewayMetrics();
  EXPECT_EQ(MetricSum(m, "spillway_gateway_requests_total",
                      {{"status", "429"}, {"reason", "fair_share"}, {"by", "gateway"}}),
            1);
}

TEST_F(LiveGatewayFairShareTest, AnInvalidFairnessIdIs400AsAtTheServer) {
  EXPECT_TRUE(IsOpenAiError(Ask(std::string(300, 'x')), 400, "invalid_fairness_id"));
  EXPECT_EQ(posts_, 0);
  EXPECT_EQ(Ask("chat").status, 200);
}

}  // namespace
}  // namespace spillway::gateway_test
