// Prefix-aware routing at the live gateway: three `serve` engines with prefix caching behind
// `spillway gateway`; requests that share a long system prompt go where it was sent before, and
// the engines find in their caches what the gateway believed they held.

#include <string>

#include "gateway/gateway_fixture.h"

namespace spillway::gateway_test {
namespace {

class LiveGatewayPrefixTest : public GatewayFixture {
 protected:
  std::vector<std::string> UpstreamArgs(int /*index*/) const override {
    return {"--enable-prefix-caching", "true"};
  }

  /// A completion whose prompt is system prompt `family` (1,600 bytes: 25 whole segments of
  /// 64 bytes, 400 tokens to the approximate tokenizer) and then question `n`.
  static std::string Body(int family, int n, int max_tokens = 4) {
    std::string prompt;
    while (prompt.size() < 1600) {
      prompt += "system prompt " + std::to_string(family) + " says be brief. ";
    }
    prompt.resize(1600);
    return R"({"model":"","max_tokens":)" + std::to_string(max_tokens) + R"(,"prompt":")" + prompt +
           " question " + std::to_string(n) + R"("})";
  }
};

TEST_F(LiveGatewayPrefixTest, APromptGoesWhereItsPrefixIsCachedAndTheEngineFindsIt) {
  constexpr int kFamilies = 4;
  constexpr int kQuestions = 5;
  for (int n = 0; n < kQuestions; ++n) {
    for (int f = 0; f < kFamilies; ++f) {
      const HttpResponse r = gateway().Post("/v1/completions", Body(f, n));
      ASSERT_EQ(r.status, 200) << r.body;
    }
  }
  // A prompt the engine refuses (400: past its context with this max_tokens) is not believed
  // cached where it was sent: the same prefix then counts nothing as matched.
  const HttpResponse refused = gateway().Post("/v1/completions", Body(9, 0, 1'000'000));
  ASSERT_EQ(refused.status, 400) << refused.body;
  ASSERT_NE(refused.body.find("context_length_exceeded"), std::string::npos) << refused.body;
  ASSERT_EQ(gateway().Post("/v1/completions", Body(9, 1)).status, 200);
  const std::string m = GatewayMetrics();
  const double matched = MetricSum(m, "spillway_gateway_prefix_matched_tokens_total");
  // Each family's first request is a miss; the next four each find the 400 shared tokens;
  // family 9's second request found nothing (its first was refused).
  EXPECT_EQ(matched, kFamilies * (kQuestions - 1) * 400.0) << m;
  double hits = 0;
  for (int i = 0; i < upstreams(); ++i) {
    const HttpResponse e = upstream_client(i).Get("/metrics");
    ASSERT_EQ(e.status, 200);
    hits += MetricSum(e.body, "vllm:prefix_cache_hits_total");
  }
  // What the gateway believed is what the engines found (measured: equal).
  EXPECT_EQ(hits, matched);
}

}  // namespace
}  // namespace spillway::gateway_test
