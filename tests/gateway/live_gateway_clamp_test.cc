// The cascade's clamp step, live: `spillway gateway --config FILE` in front of one `spillway
// serve --model big`, configured as an endpoint without metrics (kind openai) of max_running 1,
// whose pool has degrade_max_tokens 4 and degrade_ttft_fraction 0.05 (a predicted TTFT above
// 50 ms is past the load threshold). Two long requests in flight put one request ahead of the
// next: a predicted wait of 0.1 s at the prior 10 req/s, past the threshold and within the SLO.
// Pass criteria: the next request reaches the engine with max_tokens clamped to 4 (its usage
// says so), the answer says X-Degraded: max_tokens=4 and X-Spillway-Served-Model: big, for
// completions, chat (its max_completion_tokens) and streams; a request asking for no more than
// the clamp is sent as asked and not marked; the steps and the clamps are counted; an idle
// pool takes a request as asked; with `cascade.order: [primary, reject]` the loaded pool takes
// it as asked too; and the ledger balances.

#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/temp_dir.h"
#include "gateway/gateway_fixture.h"

namespace spillway::gateway_test {
namespace {

using server_test::IntAt;

/// A prompt of `n` token ids.
std::string Prompt(int n) {
  std::string out = "[";
  for (int i = 0; i < n; ++i) {
    out += (i > 0 ? ",7" : "7");
  }
  return out + "]";
}

class LiveGatewayClampTest : public GatewayFixture {
 protected:
  int upstreams() const override { return 1; }
  std::vector<std::string> UpstreamArgs(int /*index*/) const override { return {"--model", "big"}; }
  bool EndpointsAsFlags() const override { return false; }
  int scraped_upstreams() const override { return 0; }  // (kind openai: never scraped)
  std::vector<std::string> GatewayArgs() const override { return {"--config", ConfigPath()}; }
  /// The config's cascade section (empty: the default order, which has the clamp step).
  virtual std::string Cascade() const { return ""; }
  void BeforeGateway() override {
    std::ofstream(ConfigPath()) << Cascade()
                                << "pools:\n"
                                   "  - model: big\n"
                                   "    degrade_max_tokens: 4\n"
                                   "    degrade_ttft_fraction: 0.05\n"
                                   "    endpoints:\n"
                                   "      - {url: \""
                                << Url(upstream(0))
                                << "\", kind: openai, max_running: 1, service_rate_rps: 10}\n";
  }
  void TearDown() override {
    for (std::thread& t : busy_) {
      t.join();
    }
    GatewayFixture::TearDown();
  }
  /// Two requests of 150 tokens (about 2.5 s on the emulated engine) in flight: one ahead of
  /// the next request.
  void Busy() {
    for (int i = 0; i < 2; ++i) {
      busy_.emplace_back([this] { Complete(150, /*stream=*/false, /*prompt=*/4); });
    }
    ASSERT_TRUE(Eventually(
        [&] { return MetricSum(GatewayMetrics(), "spillway_gateway_in_flight") >= 2; }, 5));
  }
  std::string ConfigPath() const { return (dir_.path() / "gateway.yaml").string(); }

  HttpResponse Complete(int max_tokens, bool stream = false, int prompt = 16) const {
    return gateway().Post(
        "/v1/completions",
        R"({"model":"big","prompt":)" + Prompt(prompt) + R"(,"max_tokens":)" +
            std::to_string(max_tokens) +
            (stream ? R"(,"stream":true,"stream_options":{"include_usage":true}})" : "}"),
        {}, 10);
  }
  static std::int64_t CompletionTokens(const HttpResponse& r) {
    const auto body = server_test::ParseJson(r.body);
    return body.has_value() ? IntAt(*body, "/usage/completion_tokens").value_or(-1) : -1;
  }
  double Steps(const std::string& step) const {
    return MetricSum(GatewayMetrics(), "spillway_gateway_cascade_steps_total",
                     {{"model", "big"}, {"step", step}});
  }
  /// The step's count reaches `n` (counted once the answer is relayed, just after the client
  /// has it; the requests in flight when they end).
  bool StepsReach(const std::string& step, double n) const {
    return Eventually([&] { return Steps(step) == n; }, 5);
  }

  testing_util::TempDir dir_;
  std::vector<std::thread> busy_;
};

TEST_F(LiveGatewayClampTest, PastTheThresholdMaxTokensIsClampedAndTheAnswerSaysSo) {
  Busy();
  const HttpResponse r = Complete(16);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("X-Degraded").value_or(""), "max_tokens=4");
  EXPECT_EQ(r.Header("X-Spillway-Served-Model").value_or(""), "big");
  const std::int64_t tokens = CompletionTokens(r);
  EXPECT_GE(tokens, 1) << r.body;
  EXPECT_LE(tokens, 4) << "the engine got the clamped max_tokens: " << r.body;

  const HttpResponse chat =
      gateway().Post("/v1/chat/completions",
                     R"({"model":"big","messages":[{"role":"user","content":"hello"}],)"
                     R"("max_completion_tokens":16})",
                     {}, 10);
  ASSERT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(chat.Header("X-Degraded").value_or(""), "max_tokens=4");
  EXPECT_LE(CompletionTokens(chat), 4) << chat.body;

  const HttpResponse s = Complete(16, /*stream=*/true);
  ASSERT_EQ(s.status, 200) << s.body;
  EXPECT_EQ(s.Header("X-Degraded").value_or(""), "max_tokens=4");
  EXPECT_NE(s.body.find("[DONE]"), std::string::npos) << s.body;
  EXPECT_NE(s.body.find(R"("completion_tokens":4)"), std::string::npos) << s.body;

  // /v1/completions reads max_tokens only: a max_completion_tokens there is clamped as
  // max_tokens.
  const HttpResponse only = gateway().Post(
      "/v1/completions", R"({"model":"big","prompt":"hello","max_completion_tokens":16})", {}, 10);
  ASSERT_EQ(only.status, 200) << only.body;
  EXPECT_EQ(only.Header("X-Degraded").value_or(""), "max_tokens=4");
  EXPECT_LE(CompletionTokens(only), 4) << only.body;

  EXPECT_TRUE(StepsReach("clamp", 4)) << GatewayMetrics();
  EXPECT_EQ(
      MetricSum(GatewayMetrics(), "spillway_gateway_max_tokens_clamped_total", {{"model", "big"}}),
      4);
}

TEST_F(LiveGatewayClampTest, ARequestAskingForNoMoreThanTheClampIsSentAsAsked) {
  Busy();
  const HttpResponse r = Complete(3);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(r.Header("X-Degraded").has_value());
  EXPECT_EQ(CompletionTokens(r), 3) << r.body;
  EXPECT_EQ(MetricSum(GatewayMetrics(), "spillway_gateway_max_tokens_clamped_total"), 0);
}

TEST_F(LiveGatewayClampTest, AnIdlePoolTakesTheRequestAsAsked) {
  const HttpResponse r = Complete(16);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(r.Header("X-Degraded").has_value());
  EXPECT_EQ(CompletionTokens(r), 16) << r.body;
  EXPECT_TRUE(StepsReach("primary", 1)) << GatewayMetrics();
}

class LiveGatewayNoClampStepTest : public LiveGatewayClampTest {
 protected:
  std::string Cascade() const override { return "cascade:\n  order: [primary, reject]\n"; }
};

TEST_F(LiveGatewayNoClampStepTest, WithoutTheClampStepThePoolTakesTheRequestAsAsked) {
  Busy();
  const HttpResponse r = Complete(16);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(r.Header("X-Degraded").has_value());
  EXPECT_EQ(CompletionTokens(r), 16) << r.body;
  EXPECT_TRUE(StepsReach("primary", 3)) << "the two in flight and this one";
  EXPECT_EQ(Steps("clamp"), 0);
}

}  // namespace
}  // namespace spillway::gateway_test
