// The model cascade, live: `spillway gateway --config FILE` with two pools, "big" (a scripted
// endpoint that refuses or answers as the test says) whose fallback is "small" (a `spillway
// serve --model small`). Pass criteria: a request big refuses for load is served by small, its
// body's model rewritten, the answer's model "small" with X-Spillway-Served-Model: small and
// X-Degraded: cascade, streaming and not, and counted by (model asked, model served); a request
// big serves says X-Spillway-Served-Model: big and nothing of a cascade; big's refusal reaches
// the client unchanged for a key with `cascade: deny`, for X-Spillway-Cascade: off and for a
// refusal no other model changes (the tenant's rate_limited); a bad X-Spillway-Cascade value is
// a 400; and the ledger balances.

#include <atomic>
#include <boost/asio/write.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "gateway/gateway_fixture.h"
#include "gateway/scripted_upstream.h"

namespace spillway::gateway_test {
namespace {

using server_test::IsOpenAiError;
using server_test::StringAt;
using tcp = boost::asio::ip::tcp;

/// How the scripted "big" endpoint answers every POST.
enum class Big : std::uint8_t { kQueueDelay, kRateLimited, kAnswer };

std::string Refusal429(std::string_view reason) {
  const std::string body =
      R"({"error":{"message":"busy","type":"rate_limit_error","param":null,"code":")" +
      std::string(reason) + R"("}})";
  return "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 3\r\n"
         "X-Overload-Reason: " +
         std::string(reason) + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
         body;
}

class LiveGatewayCascadeTest : public GatewayFixture {
 protected:
  LiveGatewayCascadeTest()
      : big_([this](tcp::socket& s, int) {
          boost::system::error_code ignored;
          const Big mode = mode_.load();
          const std::string answer = mode == Big::kAnswer ? Answer200(kCompletionJson)
                                     : mode == Big::kRateLimited
                                         ? Refusal429("rate_limited")
                                         : Refusal429("queue_delay_exceeded");
          boost::asio::write(s, boost::asio::buffer(answer), ignored);
        }) {}
  int upstreams() const override { return 1; }
  std::vector<std::string> UpstreamArgs(int /*index*/) const override {
    return {"--model", "small"};
  }
  bool EndpointsAsFlags() const override { return false; }
  std::vector<std::string> GatewayArgs() const override { return {"--config", ConfigPath()}; }
  void BeforeGateway() override {
    std::ofstream(ConfigPath()) << "pools:\n"
                                   "  - model: big\n"
                                   "    fallbacks: [small]\n"
                                << BigExtra()
                                << "    endpoints:\n"
                                   "      - {url: \"http://127.0.0.1:"
                                << big_.port()
                                << "\", kind: openai}\n"
                                   "  - model: small\n"
                                   "    endpoints: [\""
                                << Url(upstream(0))
                                << "\"]\n"
                                   "api_keys:\n"
                                   "  - {key: sk-allow, tenant: a}\n"
                                   "  - {key: sk-deny, tenant: d, cascade: deny}\n";
  }
  std::string ConfigPath() const { return (dir_.path() / "gateway.yaml").string(); }
  /// More keys of big's pool.
  virtual std::string BigExtra() const { return ""; }

  HttpResponse Ask(const std::string& key, const server_test::HeaderList& extra = {},
                   bool stream = false) const {
    server_test::HeaderList headers = {{"Authorization", "Bearer " + key}};
    headers.insert(headers.end(), extra.begin(), extra.end());
    return gateway().Post("/v1/completions",
                          std::string(R"({"model":"big","prompt":[1,2,3],"max_tokens":2)") +
                              (stream ? R"(,"stream":true})" : "}"),
                          headers, 10);
  }
  double Counted(const std::string& family, const std::string& served) const {
    return MetricSum(GatewayMetrics(), family, {{"model", "big"}, {"served_model", served}});
  }
  /// served_total reaches `n` (counted once the answer is relayed, just after the client has
  /// it).
  bool ServedReaches(const std::string& served, double n) const {
    return Eventually([&] { return Counted("spillway_gateway_served_total", served) == n; }, 5);
  }

  testing_util::TempDir dir_;
  std::atomic<Big> mode_{Big::kQueueDelay};
  ScriptedUpstream big_;  // after mode_: its threads read it
};

TEST_F(LiveGatewayCascadeTest, ARefusalForLoadIsServedByTheFallbackAndTheAnswerSaysSo) {
  const HttpResponse r = Ask("sk-allow");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("X-Spillway-Served-Model").value_or(""), "small");
  EXPECT_EQ(r.Header("X-Degraded").value_or(""), "cascade");
  const auto body = server_test::ParseJson(r.body);
  ASSERT_TRUE(body.has_value()) << r.body;
  EXPECT_EQ(StringAt(*body, "/model").value_or(""), "small") << "the model that ran";

  const HttpResponse s = Ask("sk-allow", {}, /*stream=*/true);
  ASSERT_EQ(s.status, 200) << s.body;
  EXPECT_EQ(s.Header("X-Degraded").value_or(""), "cascade");
  EXPECT_NE(s.body.find("[DONE]"), std::string::npos) << s.body;
  EXPECT_NE(s.body.find(R"("model":"small")"), std::string::npos) << s.body;

  EXPECT_EQ(Counted("spillway_gateway_cascaded_total", "small"), 2);
  EXPECT_TRUE(ServedReaches("small", 2)) << GatewayMetrics();
  EXPECT_EQ(big_.posts(), 2) << "each tried on big first";
}

TEST_F(LiveGatewayCascadeTest, ARequestItsOwnPoolServesSaysSoAndIsNotDegraded) {
  mode_ = Big::kAnswer;
  const HttpResponse r = Ask("sk-allow");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("X-Spillway-Served-Model").value_or(""), "big");
  EXPECT_FALSE(r.Header("X-Degraded").has_value());
  EXPECT_TRUE(ServedReaches("big", 1)) << GatewayMetrics();
  EXPECT_EQ(Counted("spillway_gateway_cascaded_total", "small"), 0);
}

TEST_F(LiveGatewayCascadeTest, TheRefusalReachesAKeyThatDeniesItAndAClientThatOptsOut) {
  for (const auto& [key, extra] : std::vector<std::pair<std::string, server_test::HeaderList>>{
           {"sk-deny", {}}, {"sk-allow", {{"X-Spillway-Cascade", "off"}}}}) {
    const HttpResponse r = Ask(key, extra);
    EXPECT_TRUE(IsOpenAiError(r, 429, "queue_delay_exceeded")) << key;
    EXPECT_EQ(r.Header("Retry-After").value_or(""), "3") << "passed on as big sent it";
    EXPECT_FALSE(r.Header("X-Degraded").has_value());
  }
  EXPECT_EQ(Counted("spillway_gateway_cascaded_total", "small"), 0);
}

TEST_F(LiveGatewayCascadeTest, ARateLimitIsNotCascaded) {
  mode_ = Big::kRateLimited;
  EXPECT_TRUE(IsOpenAiError(Ask("sk-allow"), 429, "rate_limited"));
  EXPECT_EQ(Counted("spillway_gateway_cascaded_total", "small"), 0);
}

TEST_F(LiveGatewayCascadeTest, ABadCascadeHeaderIsA400) {
  EXPECT_TRUE(
      IsOpenAiError(Ask("sk-allow", {{"X-Spillway-Cascade", "maybe"}}), 400, "invalid_cascade"));
  EXPECT_EQ(big_.posts(), 0);
}

// With a clamp on big, its refusal as asked is followed by the clamp step on big, then the
// fallback: every stage sends to big's one endpoint again (a clamped request is another
// request), and a key that denies the cascade gets big's own refusal, not a 503 no_endpoint.
class LiveGatewayClampedCascadeTest : public LiveGatewayCascadeTest {
 protected:
  std::string BigExtra() const override { return "    degrade_max_tokens: 1\n"; }
};

TEST_F(LiveGatewayClampedCascadeTest, EachStageTriesTheEndpointAgainAndItsRefusalIsPassedOn) {
  const HttpResponse r = Ask("sk-deny");
  EXPECT_TRUE(IsOpenAiError(r, 429, "queue_delay_exceeded")) << r.status << " " << r.body;
  EXPECT_EQ(r.Header("Retry-After").value_or(""), "3") << "big's own refusal";
  EXPECT_EQ(big_.posts(), 2) << "as asked, then clamped";
  const HttpResponse served = Ask("sk-allow");
  ASSERT_EQ(served.status, 200) << served.body;
  EXPECT_EQ(served.Header("X-Spillway-Served-Model").value_or(""), "small");
  EXPECT_EQ(big_.posts(), 4);
}

}  // namespace
}  // namespace spillway::gateway_test
