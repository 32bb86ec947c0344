// Tenant quotas shared through a real Redis (Debian's redis-server, on a unix socket): two
// gateways hold one tenant's limit between them; fail-open divides it by the gateways Redis
// counted and fail-close refuses with 429 rate_limiter_unavailable while Redis is down; shared
// decisions come back once it returns; a token reservation is given back when no endpoint took
// the request; retries spend a bucket of their own; and the Lua script decides as the gateway's
// local mirror (admission/tenant_quota.h) does. Skipped when redis-server is not installed.

#include <fstream>
#include <random>

#include "admission/tenant_quota.h"
#include "common/redis_process.h"
#include "common/temp_dir.h"
#include "gateway/gateway_fixture.h"
#include "gateway/quota_script.h"
#include "gateway/scripted_upstream.h"

namespace spillway::gateway_test {
namespace {

using server_test::IsOpenAiError;

constexpr char kAsk[] = R"({"model":"big","prompt":[1,2,3],"max_tokens":4})";

class LiveGatewayQuotaTest : public GatewayFixture {
 protected:
  int upstreams() const override { return 1; }
  std::vector<std::string> UpstreamArgs(int /*index*/) const override { return {"--model", "big"}; }
  bool EndpointsAsFlags() const override { return false; }
  std::vector<std::string> GatewayArgs() const override { return {"--config", Config("a", true)}; }
  /// Three pools: `big` (the emulated engine), `gone` (an endpoint that refuses connections)
  /// and `short` (an endpoint whose every answer reports a usage of 4 tokens).
  int scraped_upstreams() const override { return 1; }

  void SetUp() override {
    if (!redis_.installed()) {
      GTEST_SKIP() << "redis-server is not installed: `scripts/deps.sh test` installs it";
    }
    ASSERT_TRUE(redis_.Start());
    GatewayFixture::SetUp();
    if (!HasFatalFailure()) {
      ASSERT_TRUE(Eventually([&] { return Mode(gateway()) == "shared"; }, 5)) << GatewayMetrics();
    }
  }

  /// Writes gateway config `name` (fail-open or fail-close) and returns its path.
  std::string Config(const std::string& name, bool fail_open) const {
    const std::string path = (dir_.path() / (name + ".yaml")).string();
    std::ofstream(path)
        << "rate_limit:\n"
           "  redis: "
        << redis_.url() << "\n  on_unavailable: " << (fail_open ? "fail_open" : "fail_close")
        << "\n"
           "  decision_budget_s: 2\n"  // (a loaded machine: shared, not over budget)
           "pools:\n"
           "  - {model: big, endpoints: [\""
        << Url(upstream(0))
        << "\"]}\n"
           "  - {model: gone, endpoints: [\"http://127.0.0.1:1\"]}\n"
           "  - {model: short, endpoints: [{url: \"http://127.0.0.1:"
        << short_.port()
        << "\", kind: openai}]}\n"
           "api_keys:\n"
           "  - {key: sk-a, tenant: a, rate_rps: 0.001, burst: 4}\n"
           "  - {key: sk-t, tenant: t, tokens_per_s: 0.001, token_burst: 150}\n"
           "  - {key: sk-r, tenant: r, retry_rps: 0.001, retry_burst: 1}\n"
           "  - {key: sk-free, tenant: free}\n";
    return path;
  }

  /// Starts a second gateway with config `name`, waiting until it decides in Redis.
  void StartSecondGateway(bool fail_open) {
    second_ = std::make_unique<ServerProcess>(
        std::vector<std::string>{"--config", Config("b", fail_open)}, "gateway");
    ASSERT_TRUE(second_->WaitUntilListening(15)) << second_->error();
    second_client_.emplace(second_->port());
    ASSERT_TRUE(Eventually([&] { return Mode(*second_client_) == "shared"; }, 5));
  }

  void TearDown() override {
    if (second_ != nullptr && HasFailure()) {
      std::cerr << "--- second gateway ---\n" << second_->Output() << "--- end ---\n";
    }
    second_.reset();
    GatewayFixture::TearDown();
  }

  static std::string Mode(const HttpClient& gw) {
    const std::string m = gw.Get("/metrics").body;
    for (const char* mode : {"shared", "fail_open", "fail_close", "local"}) {
      if (MetricSum(m, "spillway_gateway_rate_limiter_mode", {{"mode", mode}}) == 1) {
        return mode;
      }
    }
    return "";
  }

  static HttpResponse Ask(const HttpClient& gw, const std::string& key,
                          const std::string& body = kAsk,
                          const server_test::HeaderList& extra = {}) {
    server_test::HeaderList headers = {{"Authorization", "Bearer " + key}};
    headers.insert(headers.end(), extra.begin(), extra.end());
    return gw.Post("/v1/completions", body, headers, 10);
  }

  static std::string Reason(const HttpResponse& r) {
    for (const auto& [name, value] : r.headers) {
      if (name == "X-Overload-Reason") {
        return value;
      }
    }
    return "";
  }

  testing_util::TempDir dir_;
  testing_util::RedisProcess redis_;
  std::unique_ptr<ServerProcess> second_;
  std::optional<HttpClient> second_client_;
  ScriptedUpstream short_{[](boost::asio::ip::tcp::socket& s, int) {
    boost::asio::write(s, boost::asio::buffer(Answer200(kCompletionJson)));
  }};
};

TEST_F(LiveGatewayQuotaTest, TwoGatewaysHoldOneTenantsLimitBetweenThem) {
  StartSecondGateway(true);
  EXPECT_TRUE(Eventually(
      [&] { return MetricSum(GatewayMetrics(), "spillway_gateway_rate_limit_gateways") == 2; }, 5))
      << "each gateway registers itself every second";
  // A burst of 4 for the tenant, not 4 per gateway (each gateway's own bucket would allow 4).
  int ok = 0;
  int limited = 0;
  for (int i = 0; i < 6; ++i) {
    for (const HttpClient* gw : std::vector<const HttpClient*>{&gateway(), &*second_client_}) {
      const HttpResponse r = Ask(*gw, "sk-a");
      ok += r.status == 200 ? 1 : 0;
      if (r.status == 429) {
        EXPECT_EQ(Reason(r), "rate_limited");
        EXPECT_TRUE(IsOpenAiError(r, 429, "rate_limited"));
        ++limited;
      }
    }
  }
  EXPECT_EQ(ok, 4);
  EXPECT_EQ(limited, 8);
  EXPECT_EQ(
      MetricSum(GatewayMetrics(), "spillway_gateway_tenant_refusals_total",
                {{"tenant", "a"}, {"reason", "rate_limited"}}) +
          MetricSum(second_client_->Get("/metrics").body, "spillway_gateway_tenant_refusals_total",
                    {{"tenant", "a"}, {"reason", "rate_limited"}}),
      8);
}

TEST_F(LiveGatewayQuotaTest, FailOpenDividesTheLimitByTheGatewaysAndSharedDecisionsResume) {
  StartSecondGateway(true);
  ASSERT_TRUE(Eventually(
      [&] { return MetricSum(GatewayMetrics(), "spillway_gateway_rate_limit_gateways") == 2; }, 5));
  redis_.Kill();
  // Each gateway on its own at half the tenant's burst: 2 each, 4 in all.
  int ok = 0;
  for (int i = 0; i < 4; ++i) {
    for (const HttpClient* gw : std::vector<const HttpClient*>{&gateway(), &*second_client_}) {
      ok += Ask(*gw, "sk-a").status == 200 ? 1 : 0;
    }
  }
  EXPECT_EQ(ok, 4);
  EXPECT_EQ(Mode(gateway()), "fail_open");
  EXPECT_GE(MetricSum(GatewayMetrics(), "spillway_gateway_rate_limit_decisions_total",
                      {{"source", "fail_open"}}),
            4);
  // Redis back (empty: no persistence): shared again within a second, measured here with a
  // margin for a loaded machine.
  ASSERT_TRUE(redis_.Start());
  const auto back = std::chrono::steady_clock::now();
  ASSERT_TRUE(Eventually([&] { return Mode(gateway()) == "shared"; }, 3));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - back).count(), 2.0);
  EXPECT_EQ(Ask(gateway(), "sk-t").status, 200);
  EXPECT_GE(MetricSum(GatewayMetrics(), "spillway_gateway_rate_limit_decisions_total",
                      {{"source", "shared"}}),
            1);
}

TEST_F(LiveGatewayQuotaTest, FailCloseRefusesWithRateLimiterUnavailableUntilRedisReturns) {
  StartSecondGateway(false);
  redis_.Kill();
  const HttpResponse r = Ask(*second_client_, "sk-a");
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(Reason(r), "rate_limiter_unavailable");
  EXPECT_TRUE(IsOpenAiError(r, 429, "rate_limiter_unavailable"));
  EXPECT_EQ(Ask(*second_client_, "sk-free").status, 200) << "a tenant without limits";
  EXPECT_EQ(Mode(*second_client_), "fail_close");
  ASSERT_TRUE(redis_.Start());
  ASSERT_TRUE(Eventually([&] { return Mode(*second_client_) == "shared"; }, 3));
  EXPECT_EQ(Ask(*second_client_, "sk-a").status, 200);
}

TEST_F(LiveGatewayQuotaTest, ATokenReservationIsGivenBackWhenNoEndpointTookTheRequest) {
  // 3 prompt + 100 max_tokens = 103 of the 150 tokens, refilled at 0.001 a second.
  const std::string gone = R"({"model":"gone","prompt":[1,2,3],"max_tokens":100})";
  for (int i = 0; i < 3; ++i) {
    const HttpResponse r = Ask(gateway(), "sk-t", gone);
    EXPECT_EQ(r.status, 503) << "no endpoint took it, so its tokens came back: " << r.body;
  }
  // (The last one's tokens come back just after its answer: a refusal meanwhile spends none.)
  const std::string big = R"({"model":"big","prompt":[1,2,3],"max_tokens":100})";
  HttpResponse served;
  EXPECT_TRUE(Eventually([&] { return (served = Ask(gateway(), "sk-t", big)).status == 200; }, 2))
      << served.status << " " << served.body;  // generated: 103 tokens spent
  const HttpResponse spent = Ask(gateway(), "sk-t", big);
  EXPECT_EQ(spent.status, 429);
  EXPECT_EQ(Reason(spent), "token_rate_limited");
  EXPECT_TRUE(IsOpenAiError(spent, 429, "token_rate_limited"));
  EXPECT_EQ(Ask(gateway(), "sk-t", R"({"model":"big","prompt":[1,2,3],"max_tokens":40})").status,
            200)
      << "47 tokens are left";
}

TEST_F(LiveGatewayQuotaTest, ATokenReservationIsCorrectedByTheUsageTheAnswerReports) {
  // 103 reserved, 4 used (the answer's usage): 146 of the 150 left, enough for 103 again.
  const std::string short_ask = R"({"model":"short","prompt":[1,2,3],"max_tokens":100})";
  EXPECT_EQ(Ask(gateway(), "sk-t", short_ask).status, 200);
  HttpResponse again;
  EXPECT_TRUE(
      Eventually([&] { return (again = Ask(gateway(), "sk-t", short_ask)).status == 200; }, 2))
      << again.status << " " << again.body;
  // Both corrected to 4: 142 left, so 138 passes once the second correction has landed (the
  // corrections come just after the answers; a refusal meanwhile spends nothing).
  const std::string ask_138 = R"({"model":"short","prompt":[1,2,3],"max_tokens":135})";
  EXPECT_TRUE(Eventually([&] { return Ask(gateway(), "sk-t", ask_138).status == 200; }, 2));
  // That one corrected to 4 as well: 138 left, before and after its correction, and no more.
  const HttpResponse over =
      Ask(gateway(), "sk-t", R"({"model":"short","prompt":[1,2,3],"max_tokens":136})");
  EXPECT_EQ(over.status, 429) << "139 tokens of the 138 left";
  EXPECT_EQ(Reason(over), "token_rate_limited");
  EXPECT_TRUE(Eventually([&] { return Ask(gateway(), "sk-t", ask_138).status == 200; }, 2))
      << "138 tokens of the 138 left";
}

TEST_F(LiveGatewayQuotaTest, AReservationOverTheBurstIsCorrectedFromTheBurstItSpent) {
  // No max_tokens: 3 + reserve_max_tokens (256) reserved, over the burst of 150, so the whole
  // burst is spent; 4 used: 146 left (correcting from the 259 reserved would refill it).
  EXPECT_EQ(Ask(gateway(), "sk-t", R"({"model":"short","prompt":[1,2,3]})").status, 200);
  // 147 tokens are refused before the correction (none left) and after it (146 left).
  const HttpResponse over =
      Ask(gateway(), "sk-t", R"({"model":"short","prompt":[1,2,3],"max_tokens":144})");
  EXPECT_EQ(over.status, 429) << "147 tokens of the 146 left";
  EXPECT_EQ(Reason(over), "token_rate_limited");
  // The correction comes just after the answer; a refusal meanwhile spends nothing.
  EXPECT_TRUE(Eventually(
      [&] {
        return Ask(gateway(), "sk-t", R"({"model":"short","prompt":[1,2,3],"max_tokens":143})")
                   .status == 200;
      },
      2))
      << "146 tokens of the 146 left";
}

TEST_F(LiveGatewayQuotaTest, RetriesSpendABucketOfTheirOwn) {
  const server_test::HeaderList key = {{"Idempotency-Key", "order-17"}};
  EXPECT_EQ(Ask(gateway(), "sk-r", kAsk, key).status, 200);
  EXPECT_EQ(Ask(gateway(), "sk-r", kAsk, key).status, 200);  // a retry: the retry burst of 1
  const HttpResponse r = Ask(gateway(), "sk-r", kAsk, key);
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(Reason(r), "retry_rate_limited");
  // Another key is another request; the same body without a key is a retry of it.
  EXPECT_EQ(Ask(gateway(), "sk-r", kAsk, {{"Idempotency-Key", "order-18"}}).status, 200);
  EXPECT_EQ(Ask(gateway(), "sk-r", R"({"model":"big","prompt":[9],"max_tokens":4})").status, 200);
  EXPECT_EQ(Ask(gateway(), "sk-r", R"({"model":"big","prompt":[9],"max_tokens":4})").status, 429);
  const std::string m = GatewayMetrics();
  EXPECT_EQ(MetricSum(m, "spillway_gateway_tenant_retries_total", {{"tenant", "r"}}), 3);
  EXPECT_EQ(MetricSum(m, "spillway_gateway_tenant_refusals_total",
                      {{"tenant", "r"}, {"reason", "retry_rate_limited"}}),
            2);
}

/// The Lua script and TenantQuota, given the same asks at the same times, decide the same.
TEST(LiveQuotaScriptTest, TheRedisScriptDecidesAsTheLocalQuota) {
  testing_util::RedisProcess redis;
  if (!redis.installed()) {
    GTEST_SKIP() << "redis-server is not installed: `scripts/deps.sh test` installs it";
  }
  ASSERT_TRUE(redis.Start());
  const TenantQuotaLimits limits{GcraLimit{5, 3}, GcraLimit{200, 500}, GcraLimit{1, 2}};
  TenantQuota local(/*retry_window_s=*/2);
  std::mt19937_64 rng(7);
  std::int64_t now_us = 1'000'000'000'000;
  int allowed = 0;
  int refused[4] = {};
  int retries = 0;
  for (int i = 0; i < 300; ++i) {
    now_us += static_cast<std::int64_t>(rng() % 80'000);
    const int tokens = static_cast<int>(rng() % 300);
    const std::string identity = "id" + std::to_string(rng() % 40);
    const QuotaDecision want =
        local.Decide(limits, {"t", static_cast<double>(tokens), identity}, now_us / 1e6);
    const std::string got =
        redis.Command({"EVAL", gateway::kQuotaScript, "4", "q:{t}:requests", "q:{t}:tokens",
                       "q:{t}:retries", "q:{t}:seen:" + identity, std::to_string(now_us), "2000",
                       "5", "3", "1", "200", "500", std::to_string(tokens), "1", "2", "1"});
    const std::string expected = std::string(want.allowed() ? "1 " : "0 ") +
                                 std::to_string(static_cast<int>(want.refused_by)) + " ";
    ASSERT_TRUE(got.starts_with(expected))
        << "ask " << i << ": script " << got << ", local " << expected;
    EXPECT_TRUE(got.ends_with(want.retry ? " 1" : " 0")) << "ask " << i << ": " << got;
    allowed += want.allowed() ? 1 : 0;
    ++refused[static_cast<int>(want.refused_by)];
    retries += want.retry ? 1 : 0;
  }
  // Every path was taken.
  EXPECT_GT(allowed, 0);
  EXPECT_GT(refused[1], 0);
  EXPECT_GT(refused[2], 0);
  EXPECT_GT(refused[3], 0);
  EXPECT_GT(retries, 0);
}

TEST(LiveQuotaScriptTest, TheFixedWindowScriptCountsPerSecond) {
  testing_util::RedisProcess redis;
  if (!redis.installed()) {
    GTEST_SKIP() << "redis-server is not installed: `scripts/deps.sh test` installs it";
  }
  ASSERT_TRUE(redis.Start());
  const auto ask = [&](std::int64_t now_us) {
    return redis.Command(
        {"EVAL", gateway::kFixedWindowScript, "1", "w:{t}", std::to_string(now_us), "3"});
  };
  // Three at the end of one window and three at the start of the next: six within 2 ms, the
  // edge a fixed window has and a GCRA does not.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ask(5'999'000), "1 0 0 0");
  }
  EXPECT_EQ(ask(5'999'500), "0 1 500 0");  // refused until the window's end, 500 us on
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ask(6'000'500), "1 0 0 0");
  }
}

}  // namespace
}  // namespace spillway::gateway_test
