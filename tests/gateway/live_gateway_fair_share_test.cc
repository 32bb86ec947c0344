// Fair shedding at the live gateway (`spillway gateway --fair-share-min-ratio`): a flow (the
// x-gateway-inference-fairness-id header, else the tenant) that an endpoint refused for load
// contends; a flow served above its offered share meanwhile gets 429 fair_share from the
// gateway itself, without reaching the endpoint. The same routing::Pool the simulator drives.

#include <string>
#include <vector>

#include "api/openai_types.h"
#include "common/temp_dir.h"
#include "gateway/gateway_fixture.h"

namespace spillway::gateway_test {
namespace {

using server_test::IsOpenAiError;
using server_test::SmallCompletionBody;

class LiveGatewayFairShareTest : public GatewayFixture {
 protected:
  int upstreams() const override { return 1; }
  // Tenant a's bucket holds one request (then one every 1,000 s); b's is large.
  std::vector<std::string> UpstreamArgs(int) const override {
    const std::string config =
        dir_.Write("keys.yaml",
                   "api_keys:\n  - {key: sk-a, tenant: a, rate_rps: 0.001, burst: 1}\n"
                   "  - {key: sk-b, tenant: b, rate_rps: 1000, burst: 1000}\n");
    return {"--config", config};
  }
  std::vector<std::string> GatewayArgs() const override {
    return {"--model", "spillway-emulated", "--fair-share-min-ratio", "0.5"};
  }
  HttpResponse Ask(const char* key, const std::string& flow) const {
    return gateway().Post("/v1/completions", SmallCompletionBody(),
                          {{"Authorization", std::string("Bearer ") + key},
                           {std::string(api::kFairnessIdHeader), flow}});
  }
  mutable testing_util::TempDir dir_;
};

TEST_F(LiveGatewayFairShareTest, AnOverServedFlowYieldsToOneTheEndpointRefused) {
  // Tenant a's one request goes straight to the endpoint: the next one of a is refused there.
  ASSERT_EQ(upstream_client(0)
                .Post("/v1/completions", SmallCompletionBody(), {{"Authorization", "Bearer sk-a"}})
                .status,
            200);
  const HttpResponse docs = Ask("sk-a", "docs");
  ASSERT_TRUE(IsOpenAiError(docs, 429, "rate_limited")) << "the endpoint's refusal, passed on";
  // docs: half the offered, none served, refused for load. chat's first is within its share...
  EXPECT_EQ(Ask("sk-b", "chat").status, 200);
  // ...its second would be above it.
  const HttpResponse chat = Ask("sk-b", "chat");
  EXPECT_TRUE(IsOpenAiError(chat, 429, "fair_share")) << chat.body;
  EXPECT_EQ(chat.Header("X-Overload-Reason"), "fair_share");
  EXPECT_EQ(chat.Header("Retry-After"), "1");
  const std::string m = GatewayMetrics();
  EXPECT_EQ(MetricSum(m, "spillway_gateway_requests_total",
                      {{"status", "429"}, {"reason", "fair_share"}, {"by", "gateway"}}),
            1);
}

TEST_F(LiveGatewayFairShareTest, AnInvalidFairnessIdIs400AsAtTheServer) {
  EXPECT_TRUE(IsOpenAiError(Ask("sk-b", std::string(300, 'x')), 400, "invalid_fairness_id"));
  EXPECT_EQ(Ask("sk-b", "chat").status, 200);
}

}  // namespace
}  // namespace spillway::gateway_test
