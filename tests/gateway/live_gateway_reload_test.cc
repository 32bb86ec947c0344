// The gateway's config reload, live: `spillway gateway --config FILE` in front of three
// `spillway serve` upstreams on loopback (two serve the default model, the third "other"), the
// file rewritten and SIGHUP sent. Pass criteria: an endpoint removed finishes the stream it
// relays (200 to [DONE]) and gets no new request, and its series leave /metrics; an endpoint
// added takes requests; a model added is served and listed, and one removed is 404
// model_not_found; API keys added apply to the next request; a config that does not load
// changes nothing (the gateway keeps serving on the one before, and says so in its metrics);
// a shortened request timeout applies to the next request even with longer ones in flight;
// and the ledger balances through it all.

#include <chrono>
#include <csignal>
#include <fstream>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "gateway/gateway_fixture.h"

namespace spillway::gateway_test {
namespace {

using server_test::IsOpenAiError;
using server_test::PendingRequest;
using server_test::SmallCompletionBody;

class LiveGatewayReloadTest : public GatewayFixture {
 protected:
  std::vector<std::string> UpstreamArgs(int i) const override {
    if (i == 2) {
      return {"--model", "other"};
    }
    return {};
  }
  bool EndpointsAsFlags() const override { return false; }
  std::vector<std::string> GatewayArgs() const override {
    return {"--config", ConfigPath(), "--router", "round-robin"};
  }
  void BeforeGateway() override { WriteConfig(Pools({0})); }

  std::string ConfigPath() const { return (dir_.path() / "gateway.yaml").string(); }
  void WriteConfig(const std::string& yaml) const {
    std::ofstream(ConfigPath(), std::ios::trunc) << yaml;
  }
  /// A `pools:` section: the default model on upstreams `endpoints`, and with `other`, a pool
  /// "other" on upstream 2.
  std::string Pools(const std::vector<int>& endpoints, bool other = false) const {
    std::string yaml = "pools:\n  - model: spillway-emulated\n    endpoints:\n";
    for (const int i : endpoints) {
      yaml += "      - \"" + Url(upstream(i)) + "\"\n";
    }
    if (other) {
      yaml += "  - model: other\n    endpoints: [\"" + Url(upstream(2)) + "\"]\n";
    }
    return yaml;
  }
  /// Sends SIGHUP and waits until the gateway counted one more reload with `result`.
  void Reload(const std::string& result) {
    const double before = Reloads(result);
    gateway_process().Signal(SIGHUP);
    ASSERT_TRUE(Eventually([&] { return Reloads(result) == before + 1; }, 10.0))
        << GatewayMetrics();
  }
  double Reloads(const std::string& result) const {
    return MetricSum(GatewayMetrics(), "spillway_gateway_config_reloads_total",
                     {{"result", result}});
  }
  double ForwardedTo(int i) {
    return MetricSum(GatewayMetrics(), "spillway_gateway_forwarded_total",
                     {{"endpoint", Url(upstream(i))}});
  }
  static std::string CompletionFor(const std::string& model) {
    return R"({"model":")" + model + R"(","prompt":[1,2,3],"max_tokens":2})";
  }

  testing_util::TempDir dir_;
};

TEST_F(LiveGatewayReloadTest, ARemovedEndpointFinishesItsStreamAndGetsNoNewWork) {
  server_test::HttpRequest req;
  req.method = "POST";
  req.target = "/v1/completions";
  req.body = R"({"prompt":[1,2,3],"max_tokens":40,"stream":true})";  // about 1.3 s
  PendingRequest stream(gateway().port(), req, 10);
  ASSERT_TRUE(stream.ok()) << stream.error();
  ASSERT_EQ(stream.ReadHead(5).status, 200);
  ASSERT_EQ(ForwardedTo(0), 1);

  WriteConfig(Pools({1}));
  Reload("ok");
  for (int k = 0; k < 4; ++k) {
    const HttpResponse r = gateway().Post("/v1/completions", SmallCompletionBody(2));
    EXPECT_EQ(r.status, 200) << r.body;
  }
  EXPECT_EQ(ForwardedTo(0), 1) << "nothing new for the removed endpoint";
  EXPECT_EQ(ForwardedTo(1), 4);
  EXPECT_EQ(EndpointState(0, "draining"), 1) << "it drains while its stream runs";

  const HttpResponse rest = stream.ReadResponse(10);
  EXPECT_TRUE(stream.complete()) << rest.error;
  const std::vector<std::string> events = server_test::SseDataPayloads(rest.body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back(), "[DONE]") << "the stream was not cut by the reload";
  EXPECT_TRUE(Eventually(
      [&] {
        return server_test::MetricCount(GatewayMetrics(), "spillway_gateway_endpoint_state",
                                        {{"endpoint", Url(upstream(0))}}) == 0;
      },
      2.0))
      << "its series leave /metrics once its last request ended";
  EXPECT_EQ(MetricSum(GatewayMetrics(), "spillway_gateway_config_last_reload_successful"), 1);
}

TEST_F(LiveGatewayReloadTest, AnAddedEndpointTakesRequests) {
  WriteConfig(Pools({0, 1}));
  Reload("ok");
  ASSERT_TRUE(Eventually(
      [&] {
        return MetricSum(GatewayMetrics(), "spillway_gateway_scrapes_total",
                         {{"endpoint", Url(upstream(1))}, {"result", "ok"}}) >= 1;
      },
      3.0))
      << "the added endpoint is scraped";
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(gateway().Post("/v1/completions", SmallCompletionBody(2)).status, 200);
  }
  EXPECT_GE(ForwardedTo(1), 1) << "round-robin over both";
  EXPECT_EQ(ForwardedTo(0) + ForwardedTo(1), 4);
}

TEST_F(LiveGatewayReloadTest, AModelAddedIsServedAndOneRemovedIsNotFound) {
  EXPECT_EQ(gateway().Post("/v1/completions", CompletionFor("other")).status, 404);
  WriteConfig(Pools({0}, /*other=*/true));
  Reload("ok");
  EXPECT_NE(gateway().Get("/v1/models").body.find("\"other\""), std::string::npos);
  const HttpResponse served = gateway().Post("/v1/completions", CompletionFor("other"));
  EXPECT_EQ(served.status, 200) << served.body;
  EXPECT_EQ(ForwardedTo(2), 1);

  WriteConfig(Pools({0}));
  Reload("ok");
  const HttpResponse gone = gateway().Post("/v1/completions", CompletionFor("other"));
  EXPECT_TRUE(IsOpenAiError(gone, 404, "model_not_found"));
  EXPECT_EQ(gateway().Get("/v1/models").body.find("\"other\""), std::string::npos);
  EXPECT_EQ(gateway().Post("/v1/completions", SmallCompletionBody(2)).status, 200);
}

TEST_F(LiveGatewayReloadTest, ApiKeysAddedApplyToTheNextRequest) {
  EXPECT_EQ(gateway().Post("/v1/completions", SmallCompletionBody(2)).status, 200);
  WriteConfig(Pools({0}) + "api_keys:\n  - {key: sk-a, tenant: a}\n");
  Reload("ok");
  const HttpResponse anonymous = gateway().Post("/v1/completions", SmallCompletionBody(2));
  EXPECT_EQ(anonymous.status, 401) << anonymous.body;
  const HttpResponse keyed =
      gateway().Post("/v1/completions", SmallCompletionBody(2), {{"Authorization", "Bearer sk-a"}});
  EXPECT_EQ(keyed.status, 200) << keyed.body;
}

TEST_F(LiveGatewayReloadTest, AConfigThatDoesNotLoadChangesNothing) {
  WriteConfig(Pools({1}) + "router: {ttft_slo_s: -1}\n");  // out of range
  Reload("error");
  EXPECT_EQ(MetricSum(GatewayMetrics(), "spillway_gateway_config_last_reload_successful"), 0);
  EXPECT_EQ(gateway().Post("/v1/completions", SmallCompletionBody(2)).status, 200);
  EXPECT_EQ(ForwardedTo(0), 1) << "still the endpoint of the config before";
  EXPECT_EQ(ForwardedTo(1), 0);
  EXPECT_NE(gateway_process().Output().find("reload failed"), std::string::npos);

  WriteConfig(
      "pools: [{model: spillway-emulated, endpoints: [\"http://127.0.0.1:1\"]}]\n"
      "  bad indentation: [\n");  // not YAML
  Reload("error");
  EXPECT_EQ(gateway().Post("/v1/completions", SmallCompletionBody(2)).status, 200);

  WriteConfig(Pools({1}));  // fixed: applies
  Reload("ok");
  EXPECT_EQ(MetricSum(GatewayMetrics(), "spillway_gateway_config_last_reload_successful"), 1);
  EXPECT_EQ(gateway().Post("/v1/completions", SmallCompletionBody(2)).status, 200);
  EXPECT_EQ(ForwardedTo(1), 1);
}

// The deadlines of all attempts share one timer, armed at the earliest: a request whose
// deadline comes before those in flight (the timeout was shortened) must re-arm it, or it would
// wait for theirs.
TEST_F(LiveGatewayReloadTest, AShortenedRequestTimeoutAppliesBeforeTheLongerOnesInFlight) {
  WriteConfig(Pools({0, 1}) + "timeouts: {request_timeout_s: 3}\n");
  Reload("ok");
  server_test::HttpRequest req;
  req.method = "POST";
  req.target = "/v1/completions";
  req.body = R"({"prompt":[1,2,3],"max_tokens":250,"stream":true})";  // about 4 s
  const auto long_sent = std::chrono::steady_clock::now();
  PendingRequest stream(gateway().port(), req, 20);
  ASSERT_TRUE(stream.ok()) << stream.error();
  ASSERT_EQ(stream.ReadHead(5).status, 200);

  WriteConfig(Pools({0, 1}) + "timeouts: {request_timeout_s: 1.2}\n");
  Reload("ok");
  const auto sent = std::chrono::steady_clock::now();
  const HttpResponse r =
      gateway().Post("/v1/completions", R"({"prompt":[1,2,3],"max_tokens":150})", {}, 10);
  const auto seconds_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  const double took_s = seconds_since(sent);
  EXPECT_TRUE(IsOpenAiError(r, 504, "request_timeout")) << r.status << " " << r.body;
  EXPECT_GE(took_s, 1.1);
  EXPECT_LT(took_s, 2.0) << "its 1.2 s, not the 3 s of the stream in flight";

  const HttpResponse rest = stream.ReadResponse(10);
  const std::vector<std::string> events = server_test::SseDataPayloads(rest.body);
  ASSERT_FALSE(events.empty());
  const auto last = server_test::ParseJson(events.back());
  ASSERT_TRUE(last.has_value()) << events.back();
  EXPECT_EQ(server_test::StringAt(*last, "/error/code"), "request_timeout");
  const double long_took_s = seconds_since(long_sent);
  EXPECT_GE(long_took_s, 2.9) << "the stream keeps the timeout it started with";
  EXPECT_LT(long_took_s, 4.0);
}

}  // namespace
}  // namespace spillway::gateway_test
