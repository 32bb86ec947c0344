// The exact-result cache, live: `spillway gateway --config FILE` with `cache: {max_entries:
// 100}` in front of one `spillway serve --model big`, keys of tenants a and b (the default:
// deterministic requests only), c (`cache: any`), d (`cache: off`) and e (a bucket of 2).
// Pass criteria: a deterministic request asked again by the same tenant is answered from the
// cache (X-Cache: hit, the same body, no endpoint attempt), streaming too (the recorded events
// replayed, [DONE] included); another tenant's identical request is not; a temperature 0.7
// request is never cached unless its key says any; Cache-Control no-cache skips the lookup and
// no-store the cache altogether; a key with `cache: off` is never cached; a hit still spends
// the tenant's token bucket; lookups are counted; and the ledger balances (a hit is completed).

#include <fstream>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "gateway/gateway_fixture.h"

namespace spillway::gateway_test {
namespace {

using server_test::IsOpenAiError;

constexpr char kDeterministic[] =
    R"({"model":"big","prompt":[1,2,3],"max_tokens":4,"temperature":0})";

class LiveGatewayCacheTest : public GatewayFixture {
 protected:
  int upstreams() const override { return 1; }
  std::vector<std::string> UpstreamArgs(int /*index*/) const override { return {"--model", "big"}; }
  bool EndpointsAsFlags() const override { return false; }
  std::vector<std::string> GatewayArgs() const override { return {"--config", ConfigPath()}; }
  void BeforeGateway() override {
    std::ofstream(ConfigPath()) << "cache: {max_entries: 100, ttl_s: 60}\n"
                                   "pools:\n"
                                   "  - model: big\n"
                                   "    endpoints: [\""
                                << Url(upstream(0))
                                << "\"]\n"
                                   "api_keys:\n"
                                   "  - {key: sk-a, tenant: a}\n"
                                   "  - {key: sk-b, tenant: b}\n"
                                   "  - {key: sk-c, tenant: c, cache: any}\n"
                                   "  - {key: sk-d, tenant: d, cache: 'off'}\n"
                                   "  - {key: sk-e, tenant: e, rate_rps: 0.001, burst: 2}\n";
  }
  std::string ConfigPath() const { return (dir_.path() / "gateway.yaml").string(); }

  HttpResponse Ask(const std::string& key, const std::string& body,
                   const server_test::HeaderList& extra = {}) const {
    server_test::HeaderList headers = {{"Authorization", "Bearer " + key}};
    headers.insert(headers.end(), extra.begin(), extra.end());
    return gateway().Post("/v1/completions", body, headers, 10);
  }
  /// Attempts sent to the endpoint so far.
  double Forwarded() const {
    return MetricSum(GatewayMetrics(), "spillway_gateway_forwarded_total");
  }
  /// The answer is stored once relayed, just after the client has it.
  bool StoredReaches(double n) const {
    return Eventually(
        [&] {
          return MetricSum(GatewayMetrics(), "spillway_gateway_cache_stores_total",
                           {{"result", "stored"}}) == n;
        },
        5);
  }

  testing_util::TempDir dir_;
};

TEST_F(LiveGatewayCacheTest, TheSameRequestOfTheSameTenantIsAnsweredFromTheCache) {
  const HttpResponse first = Ask("sk-a", kDeterministic);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.Header("X-Cache").value_or(""), "miss");
  ASSERT_TRUE(StoredReaches(1)) << GatewayMetrics();
  // The same fields in another order are the same request.
  const HttpResponse again =
      Ask("sk-a", R"({"temperature":0,"max_tokens":4,"prompt":[1,2,3],"model":"big"})");
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.Header("X-Cache").value_or(""), "hit");
  EXPECT_EQ(again.Header("X-Spillway-Served-Model").value_or(""), "big");
  EXPECT_EQ(again.body, first.body);
  EXPECT_EQ(Forwarded(), 1) << "no endpoint attempt for the hit";
  EXPECT_EQ(
      MetricSum(GatewayMetrics(), "spillway_gateway_cache_lookups_total", {{"result", "hit"}}), 1);
  EXPECT_EQ(MetricSum(GatewayMetrics(), "spillway_gateway_cache_entries"), 1);

  // Another tenant asking the very same is not given a's answer.
  const HttpResponse other = Ask("sk-b", kDeterministic);
  ASSERT_EQ(other.status, 200) << other.body;
  EXPECT_EQ(other.Header("X-Cache").value_or(""), "miss");
  EXPECT_EQ(Forwarded(), 2);
}

TEST_F(LiveGatewayCacheTest, AStreamIsReplayedAsRecorded) {
  const std::string body =
      R"({"model":"big","prompt":[5,6],"max_tokens":3,"seed":7,"stream":true})";
  const HttpResponse first = Ask("sk-a", body);
  ASSERT_EQ(first.status, 200) << first.body;
  ASSERT_NE(first.body.find("[DONE]"), std::string::npos) << first.body;
  ASSERT_TRUE(StoredReaches(1)) << GatewayMetrics();
  const HttpResponse again = Ask("sk-a", body);
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.Header("X-Cache").value_or(""), "hit");
  EXPECT_NE(again.Header("Content-Type").value_or("").find("text/event-stream"), std::string::npos);
  EXPECT_EQ(again.body, first.body) << "a fixed seed is deterministic: cached";
  EXPECT_EQ(Forwarded(), 1);
}

TEST_F(LiveGatewayCacheTest, ASampledRequestIsNeverCachedUnlessItsKeySaysAny) {
  const std::string sampled =
      R"({"model":"big","prompt":[1,2,3],"max_tokens":4,"temperature":0.7})";
  for (int i = 0; i < 2; ++i) {
    const HttpResponse r = Ask("sk-a", sampled);
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_FALSE(r.Header("X-Cache").has_value()) << "not looked up";
  }
  EXPECT_EQ(Forwarded(), 2);
  ASSERT_EQ(Ask("sk-c", sampled).status, 200);
  ASSERT_TRUE(StoredReaches(1)) << GatewayMetrics();
  EXPECT_EQ(Ask("sk-c", sampled).Header("X-Cache").value_or(""), "hit") << "cache: any";
  for (int i = 0; i < 2; ++i) {
    EXPECT_FALSE(Ask("sk-d", kDeterministic).Header("X-Cache").has_value()) << "cache: off";
  }
  EXPECT_EQ(Forwarded(), 5);
}

TEST_F(LiveGatewayCacheTest, CacheControlNoCacheSkipsTheLookupAndNoStoreTheCache) {
  EXPECT_FALSE(
      Ask("sk-a", kDeterministic, {{"Cache-Control", "no-store"}}).Header("X-Cache").has_value());
  EXPECT_EQ(Ask("sk-a", kDeterministic).Header("X-Cache").value_or(""), "miss")
      << "no-store kept nothing";
  ASSERT_TRUE(StoredReaches(1)) << GatewayMetrics();
  EXPECT_FALSE(
      Ask("sk-a", kDeterministic, {{"Cache-Control", "no-cache"}}).Header("X-Cache").has_value())
      << "sent to the endpoint";
  EXPECT_EQ(Forwarded(), 3);
  EXPECT_EQ(Ask("sk-a", kDeterministic).Header("X-Cache").value_or(""), "hit");
}

TEST_F(LiveGatewayCacheTest, AHitStillSpendsTheTenantsBucket) {
  ASSERT_EQ(Ask("sk-e", kDeterministic).status, 200);
  ASSERT_TRUE(StoredReaches(1)) << GatewayMetrics();
  EXPECT_EQ(Ask("sk-e", kDeterministic).Header("X-Cache").value_or(""), "hit");
  EXPECT_TRUE(IsOpenAiError(Ask("sk-e", kDeterministic), 429, "rate_limited"))
      << "a bucket of 2: the third is refused, cached or not";
}

TEST_F(LiveGatewayCacheTest, ARouteAndCacheControlAreHonouredAsTheRfcSays) {
  // One body both routes accept: a chat answer is never a completion's.
  const std::string both =
      R"({"model":"big","prompt":"hi","messages":[{"role":"user","content":"hi"}],)"
      R"("max_tokens":2,"temperature":0})";
  ASSERT_EQ(Ask("sk-a", both).status, 200);
  ASSERT_TRUE(StoredReaches(1)) << GatewayMetrics();
  const HttpResponse chat =
      gateway().Post("/v1/chat/completions", both, {{"Authorization", "Bearer sk-a"}}, 10);
  ASSERT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(chat.Header("X-Cache").value_or(""), "miss");
  EXPECT_NE(chat.body.find("chat.completion"), std::string::npos) << chat.body;
  // Directives are case-insensitive, in any of several headers; a longer token is another.
  EXPECT_FALSE(
      Ask("sk-b", kDeterministic, {{"Cache-Control", "max-age=10"}, {"Cache-Control", "NO-STORE"}})
          .Header("X-Cache")
          .has_value());
  EXPECT_EQ(
      Ask("sk-b", kDeterministic, {{"Cache-Control", "no-storex"}}).Header("X-Cache").value_or(""),
      "miss")
      << "nothing kept before; this one is";
  ASSERT_TRUE(StoredReaches(3)) << GatewayMetrics();
  EXPECT_FALSE(
      Ask("sk-b", kDeterministic, {{"Cache-Control", " No-Cache "}}).Header("X-Cache").has_value());
}

}  // namespace
}  // namespace spillway::gateway_test
