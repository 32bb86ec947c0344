// `spillway gateway` in front of three `spillway serve` upstreams on loopback: what it relays,
// what it refuses, and that a client leaving or the gateway's deadline reaches the engine.
// Every test ends with the gateway's conservation ledger checked (gateway_fixture.h).

#include <sys/wait.h>

#include <csignal>
#include <fstream>

#include "api/openai_types.h"
#include "common/run_command.h"
#include "common/temp_dir.h"
#include "gateway/gateway_fixture.h"

namespace spillway::gateway_test {
namespace {

using server_test::IsOpenAiError;
using server_test::ParseJson;
using server_test::PendingRequest;
using server_test::SmallCompletionBody;
using server_test::SseDataPayloads;
using server_test::StringAt;

/// Requests running on all upstreams, from their own /metrics.
double RunningEverywhere(const std::vector<HttpClient>& ups) {
  double running = 0;
  for (const HttpClient& c : ups) {
    running += MetricSum(c.Get("/metrics").body, "vllm:num_requests_running");
  }
  return running;
}

class LiveGatewayRelayTest : public GatewayFixture {
 protected:
  std::vector<HttpClient> Upstreams() const {
    std::vector<HttpClient> out;
    for (int i = 0; i < upstreams(); ++i) {
      out.push_back(upstream_client(i));
    }
    return out;
  }
};

TEST_F(LiveGatewayRelayTest, RelaysCompletionsAndChatStreamingAndNot) {
  const HttpResponse plain = gateway().Post("/v1/completions", SmallCompletionBody(5));
  ASSERT_EQ(plain.status, 200) << plain.error << plain.body;
  const auto v = ParseJson(plain.body);
  ASSERT_TRUE(v.has_value()) << plain.body;
  EXPECT_EQ(StringAt(*v, "/choices/0/finish_reason"), "length");
  EXPECT_EQ(StringAt(*v, "/model"), "spillway-emulated");

  const HttpResponse chat = gateway().Post(
      "/v1/chat/completions",
      R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":3,"stream":true})");
  ASSERT_EQ(chat.status, 200) << chat.error << chat.body;
  EXPECT_EQ(chat.Header("Content-Type"), "text/event-stream");
  int cache_control = 0;
  for (const auto& [name, value] : chat.headers) {
    cache_control += server_test::EqualsIgnoreCase(name, "Cache-Control") ? 1 : 0;
  }
  EXPECT_EQ(cache_control, 1) << "the gateway's own, not the endpoint's as well";
  const std::vector<std::string> events = SseDataPayloads(chat.body);
  ASSERT_GE(events.size(), 2u) << chat.body;
  EXPECT_EQ(events.back(), "[DONE]");

  // The gateway counts a request once it has relayed its end, which the client may read first.
  std::string m;
  EXPECT_TRUE(Eventually(
      [&] { return MetricSum(m = GatewayMetrics(), "spillway_gateway_completed_total") == 2; }, 3))
      << m;
  EXPECT_EQ(
      MetricSum(m, "spillway_gateway_requests_total", {{"status", "200"}, {"by", "endpoint"}}), 2);
  EXPECT_EQ(MetricSum(m, "spillway_gateway_ttft_seconds_count"), 1) << "the stream's only";
}

TEST_F(LiveGatewayRelayTest, ValidatesAsServeDoesAndNamesTheModelsItServes) {
  EXPECT_TRUE(IsOpenAiError(gateway().Post("/v1/completions", "{not json"), 400, "invalid_json"));
  EXPECT_TRUE(IsOpenAiError(
      gateway().Post("/v1/completions", R"({"model":"gpt-9","prompt":"x","max_tokens":2})"), 404,
      "model_not_found"));
  EXPECT_TRUE(IsOpenAiError(gateway().Get("/nowhere"), 404, "not_found"));
  const HttpResponse get = gateway().Get("/v1/completions");
  EXPECT_TRUE(IsOpenAiError(get, 405, "method_not_allowed"));
  EXPECT_EQ(get.Header("Allow"), "POST");
  const HttpResponse models = gateway().Get("/v1/models");
  ASSERT_EQ(models.status, 200);
  const auto v = ParseJson(models.body);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(StringAt(*v, "/data/0/id"), "spillway-emulated") << "discovered from the upstreams";
  EXPECT_EQ(gateway().Get("/health").status, 200);
  EXPECT_EQ(gateway().Get("/ready").status, 200);
  const std::string m = GatewayMetrics();
  EXPECT_EQ(MetricSum(m, "spillway_gateway_received_total"), 0) << "refused before a pool";
  EXPECT_EQ(MetricSum(m, "spillway_gateway_requests_total", {{"by", "gateway"}}), 2)
      << "the 405 and 404 of other routes are not completion replies";
}

TEST_F(LiveGatewayRelayTest, SpreadsRequestsOverEveryEndpoint) {
  for (int i = 0; i < 30; ++i) {
    ASSERT_EQ(gateway().Post("/v1/completions", SmallCompletionBody(2)).status, 200);
  }
  const std::string m = GatewayMetrics();
  for (int i = 0; i < upstreams(); ++i) {
    // Power of two choices among three idle endpoints with equal predictions: a tie goes to the
    // first drawn, so each gets a third, about 10 of 30 (3 or fewer: p < 0.001).
    EXPECT_GE(MetricSum(m, "spillway_gateway_forwarded_total", {{"endpoint", Url(upstream(i))}}), 3)
        << m;
  }
}

TEST_F(LiveGatewayRelayTest, AClientLeavingMidStreamIsAbortedAtTheEngine) {
  const std::vector<HttpClient> ups = Upstreams();
  server_test::HttpRequest req;
  req.method = "POST";
  req.target = "/v1/completions";
  req.body = R"({"prompt":[1,2,3],"max_tokens":150,"stream":true})";  // about 5 s of decode
  PendingRequest stream(gateway().port(), req, 10);
  ASSERT_TRUE(stream.ok()) << stream.error();
  ASSERT_EQ(stream.ReadHead(5).status, 200);
  ASSERT_TRUE(stream.NextEvent(5).has_value());
  EXPECT_EQ(RunningEverywhere(ups), 1);
  const auto closed = std::chrono::steady_clock::now();
  stream.Close();
  // One decode step (about 32 ms) and a scrape; 1 s bound.
  EXPECT_TRUE(Eventually([&] { return RunningEverywhere(ups) == 0; }, 1.0));
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - closed).count();
  RecordProperty("abort_seen_after_ms", static_cast<int>(took_s * 1000));
  double aborted = 0;
  for (const HttpClient& c : ups) {
    aborted += MetricSum(c.Get("/metrics").body, "spillway_aborts_total",
                         {{"cause", "client_disconnect"}});
  }
  EXPECT_EQ(aborted, 1);
  EXPECT_TRUE(Eventually(
      [&] { return MetricSum(GatewayMetrics(), "spillway_gateway_cancelled_total") == 1; }, 2));
}

TEST_F(LiveGatewayRelayTest, AClientLeavingANonStreamingRequestIsAbortedAtTheEngine) {
  const std::vector<HttpClient> ups = Upstreams();
  server_test::HttpRequest req;
  req.method = "POST";
  req.target = "/v1/completions";
  req.body = R"({"prompt":[1,2,3],"max_tokens":150})";
  PendingRequest pending(gateway().port(), req, 10);
  ASSERT_TRUE(pending.ok()) << pending.error();
  ASSERT_TRUE(Eventually([&] { return RunningEverywhere(ups) == 1; }, 2.0));
  pending.Close();
  EXPECT_TRUE(Eventually([&] { return RunningEverywhere(ups) == 0; }, 1.0))
      << "the gateway closed the upstream connection, so serve aborted";
}

class LiveGatewayDeadlineTest : public LiveGatewayRelayTest {
 protected:
  std::vector<std::string> GatewayArgs() const override { return {"--request-timeout-s", "1.5"}; }
};

TEST_F(LiveGatewayDeadlineTest, TheDeadlineIs504OrAnSseErrorAndClosesTheUpstream) {
  const std::vector<HttpClient> ups = Upstreams();
  const auto sent = std::chrono::steady_clock::now();
  const HttpResponse r =
      gateway().Post("/v1/completions", R"({"prompt":[1,2,3],"max_tokens":150})", {}, 10);
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  EXPECT_TRUE(IsOpenAiError(r, 504, "request_timeout"));
  EXPECT_EQ(r.Header("X-Overload-Reason"), std::nullopt) << "a 504 is not a refusal";
  EXPECT_GE(took_s, 1.4);
  EXPECT_LT(took_s, 2.5);
  EXPECT_TRUE(Eventually([&] { return RunningEverywhere(ups) == 0; }, 1.0));

  const HttpResponse s = gateway().Post(
      "/v1/completions", R"({"prompt":[1,2,3],"max_tokens":150,"stream":true})", {}, 10);
  ASSERT_EQ(s.status, 200);
  const std::vector<std::string> events = SseDataPayloads(s.body);
  ASSERT_FALSE(events.empty());
  const auto last = ParseJson(events.back());
  ASSERT_TRUE(last.has_value()) << events.back();
  EXPECT_EQ(StringAt(*last, "/error/code"), "request_timeout") << s.body;
  EXPECT_TRUE(Eventually([&] { return RunningEverywhere(ups) == 0; }, 1.0));
  const std::string m = GatewayMetrics();
  EXPECT_EQ(MetricSum(m, "spillway_gateway_failed_total"), 2);
  EXPECT_EQ(MetricSum(m, "spillway_gateway_requests_total", {{"reason", "request_timeout"}}), 2);
}

// A drain that runs out of time ends what is still in flight cleanly: 503 draining for a reply
// not yet begun, an SSE error event for a stream, never a cut connection.
class LiveGatewayDrainTimeoutTest : public LiveGatewayRelayTest {
 protected:
  int upstreams() const override { return 1; }
  std::vector<std::string> GatewayArgs() const override { return {"--drain-timeout-s", "1"}; }
};

TEST_F(LiveGatewayDrainTimeoutTest, WhatIsLeftAtTheDrainTimeoutGets503DrainingOrAnSseError) {
  server_test::HttpRequest plain;
  plain.method = "POST";
  plain.target = "/v1/completions";
  plain.body = R"({"prompt":[1,2,3],"max_tokens":130})";  // about 4 s
  server_test::HttpRequest stream = plain;
  stream.body = R"({"prompt":[1,2,3],"max_tokens":130,"stream":true})";
  PendingRequest a(gateway().port(), plain, 10);
  PendingRequest b(gateway().port(), stream, 10);
  ASSERT_EQ(b.ReadHead(5).status, 200);
  ASSERT_TRUE(b.NextEvent(5).has_value());
  gateway_process().Signal(SIGTERM);
  const HttpResponse ra = a.ReadResponse(5);
  EXPECT_TRUE(IsOpenAiError(ra, 503, "draining")) << ra.error;
  EXPECT_EQ(ra.Header("X-Overload-Reason"), "draining");
  const HttpResponse rb = b.ReadResponse(5);
  const std::vector<std::string> events = SseDataPayloads(rb.body);
  ASSERT_FALSE(events.empty()) << rb.error;
  EXPECT_NE(events.back().find("\"code\":\"draining\""), std::string::npos) << rb.body;
  const std::optional<int> status = gateway_process().WaitForExit(5);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
}

class LiveGatewayRefusalTest : public GatewayFixture {
 protected:
  int upstreams() const override { return 1; }
  std::vector<std::string> UpstreamArgs(int) const override {
    const std::string config = dir_.Write(
        "keys.yaml", "api_keys:\n  - {key: sk-a, tenant: a, rate_rps: 0.001, burst: 1}\n");
    return {"--config", config};
  }
  // The endpoint wants an API key for GET /v1/models too: the model is named.
  std::vector<std::string> GatewayArgs() const override { return {"--model", "spillway-emulated"}; }
  mutable testing_util::TempDir dir_;
};

TEST_F(LiveGatewayRefusalTest, AnEndpointsRefusalIsPassedOnWithItsContractHeaders) {
  const server_test::HeaderList key = {{"Authorization", "Bearer sk-a"}};
  ASSERT_EQ(gateway().Post("/v1/completions", SmallCompletionBody(), key).status, 200);
  const HttpResponse r = gateway().Post("/v1/completions", SmallCompletionBody(), key);
  EXPECT_TRUE(IsOpenAiError(r, 429, "rate_limited"));
  EXPECT_EQ(r.Header("X-Overload-Reason"), "rate_limited");
  EXPECT_TRUE(r.Header("Retry-After").has_value());
  EXPECT_TRUE(r.Header("X-RateLimit-Reset").has_value()) << "the endpoint's own header";
  EXPECT_TRUE(IsOpenAiError(gateway().Post("/v1/completions", SmallCompletionBody()), 401,
                            "invalid_api_key"))
      << "the endpoint's 401, relayed";
  const std::string m = GatewayMetrics();
  EXPECT_EQ(MetricSum(m, "spillway_gateway_requests_total",
                      {{"status", "429"}, {"reason", "rate_limited"}, {"by", "endpoint"}}),
            1);
  EXPECT_EQ(MetricSum(m, "spillway_gateway_retries_total"), 0)
      << "one endpoint: nothing else to try";
}

// Spillway's own headers pass through the gateway both ways: the engine's TTFT forecast to
// the client (what `spillway bench` calibrates), the client's fairness ID to the engine.
class LiveGatewayForecastTest : public GatewayFixture {
 protected:
  int upstreams() const override { return 1; }
  std::vector<std::string> UpstreamArgs(int /*index*/) const override {
    return {"--policy", "forecast"};
  }
};

TEST_F(LiveGatewayForecastTest, TheForecastAndTheFairnessIdPassThrough) {
  const HttpResponse r = gateway().Post("/v1/completions", SmallCompletionBody(),
                                        {{std::string(api::kFairnessIdHeader), "docs"}});
  ASSERT_EQ(r.status, 200) << r.error << r.body;
  const std::optional<std::string> forecast = r.Header(std::string(api::kTtftForecastHeader));
  ASSERT_TRUE(forecast.has_value());
  EXPECT_GE(std::stod(*forecast), 0.0);
  EXPECT_LT(std::stod(*forecast), 1.0) << "an idle engine: within the SLO";
  // What the gateway routes on: the engine's forecast wait is exported, within its range.
  const double wait =
      MetricSum(upstream_client(0).Get("/metrics").body, "spillway_ttft_forecast_queue_seconds");
  EXPECT_GE(wait, 0.0);
  EXPECT_LE(wait, 2.0);
  EXPECT_TRUE(IsOpenAiError(gateway().Post("/v1/completions", SmallCompletionBody(),
                                           {{std::string(api::kFairnessIdHeader), ""}}),
                            400, "invalid_fairness_id"))
      << "the engine's check, relayed";
}

// The gateway's own API keys (as serve's): authentication, the tenant's bucket, and the
// priority clamp, decided before any endpoint is asked.
class LiveGatewayKeysTest : public GatewayFixture {
 protected:
  int upstreams() const override { return 1; }
  std::vector<std::string> GatewayArgs() const override {
    const std::string config =
        dir_.Write("gw.yaml",
                   "api_keys:\n  - {key: sk-a, tenant: a, rate_rps: 0.001, burst: 1}\n"
                   "  - {key: sk-b, tenant: b, max_priority: 5}\n");
    return {"--config", config};
  }
  testing_util::TempDir dir_;
};

TEST_F(LiveGatewayKeysTest, KeysBucketsAndPriorityClampAtTheGateway) {
  EXPECT_TRUE(IsOpenAiError(gateway().Post("/v1/completions", SmallCompletionBody()), 401,
                            "invalid_api_key"));
  const server_test::HeaderList a = {{"Authorization", "Bearer sk-a"}};
  ASSERT_EQ(gateway().Post("/v1/completions", SmallCompletionBody(), a).status, 200);
  const HttpResponse limited = gateway().Post("/v1/completions", SmallCompletionBody(), a);
  EXPECT_TRUE(IsOpenAiError(limited, 429, "rate_limited"));
  EXPECT_EQ(limited.Header("X-Overload-Reason"), "rate_limited");
  EXPECT_TRUE(limited.Header("Retry-After").has_value());
  EXPECT_TRUE(limited.Header("X-RateLimit-Reset").has_value());
  // Decided from the head, before the body is read or parsed: a body that is not JSON is
  // refused 429 all the same, not 400.
  EXPECT_TRUE(
      IsOpenAiError(gateway().Post("/v1/completions", "{not json", a), 429, "rate_limited"));
  const server_test::HeaderList bad = {{"Authorization", "Bearer sk-b"},
                                       {"X-Priority-Class", "urgent"}};
  EXPECT_TRUE(IsOpenAiError(gateway().Post("/v1/completions", SmallCompletionBody(), bad), 400,
                            "invalid_priority"));
  const server_test::HeaderList b = {{"Authorization", "Bearer sk-b"}, {"X-Priority-Class", "0"}};
  const HttpResponse clamped = gateway().Post("/v1/completions", SmallCompletionBody(), b);
  ASSERT_EQ(clamped.status, 200);
  EXPECT_EQ(clamped.Header("X-Priority-Class"), "5") << "clamped to the key's max_priority";
  const std::string m = GatewayMetrics();
  EXPECT_EQ(MetricSum(m, "spillway_gateway_requests_total",
                      {{"status", "429"}, {"reason", "rate_limited"}, {"by", "gateway"}}),
            2);
  EXPECT_EQ(MetricSum(m, "spillway_gateway_forwarded_total"), 2) << "refusals asked no endpoint";
}

class LiveGatewayPromtoolTest : public LiveGatewayRelayTest {};

TEST_F(LiveGatewayPromtoolTest, MetricsParseAndLintClean) {
  const std::optional<std::string> promtool = testing_util::FindOnPath("promtool");
  if (!promtool.has_value()) {
    GTEST_SKIP() << "promtool is not installed: `make deps` installs the Debian package prometheus";
  }
  ASSERT_EQ(gateway().Post("/v1/completions", SmallCompletionBody()).status, 200);
  testing_util::TempDir dir;
  const std::string exposition = GatewayMetrics();
  for (const char* family :
       {"spillway_gateway_queued{", "spillway_gateway_queue_wait_seconds_count",
        "spillway_gateway_prediction_margin_seconds{"}) {
    EXPECT_NE(exposition.find(family), std::string::npos) << family;
  }
  const std::string path = dir.Write("gateway.prom", exposition);
  const testing_util::CommandResult r =
      testing_util::RunCommand({"sh", "-c", *promtool + " check metrics < " + path}, 30);
  EXPECT_TRUE(r.exited && r.exit_code == 0) << r.description << "\n" << r.output;
}

}  // namespace
}  // namespace spillway::gateway_test
