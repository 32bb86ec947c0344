// API keys and per-tenant rate limits from the YAML config: requests without a known key get
// 401; tenant a (1 request/s, burst 2) gets 429 rate_limited on its third rapid request, with
// Retry-After and X-RateLimit-Reset; tenant b (no limit) is unaffected.

#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"
#include "common/temp_dir.h"

namespace spillway {
namespace {

using server_test::HeaderList;
using server_test::HttpResponse;
using server_test::IsOpenAiError;

const HeaderList kKeyA = {{"Authorization", "Bearer test-key-a"}};
const HeaderList kKeyB = {{"Authorization", "Bearer test-key-b"}};

class RateLimitTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    const std::string config = dir_.Write("rate_limits.yaml",
                                          "server:\n"
                                          "  max_body_bytes: 65536\n"
                                          "engine:\n"
                                          "  default_max_tokens: 16\n"
                                          "admission:\n"
                                          "  policy: predictive\n"
                                          "timeouts:\n"
                                          "  client_timeout_s: 5\n"
                                          "  request_timeout_s: 4.5\n"
                                          "api_keys:\n"
                                          "  - key: test-key-a\n"
                                          "    tenant: a\n"
                                          "    rate_rps: 1\n"
                                          "    burst: 2\n"
                                          "  - key: test-key-b\n"
                                          "    tenant: b\n"
                                          "  - key: test-key-c\n"
                                          "    tenant: c\n"
                                          "    max_priority: 1\n");
    return {"--config", config};
  }

  HttpResponse Complete(const HeaderList& headers) const {
    return client().Post("/v1/completions", server_test::SmallCompletionBody(1), headers);
  }

  testing_util::TempDir dir_;
};

TEST_F(RateLimitTest, MissingApiKeyGets401) {
  EXPECT_TRUE(IsOpenAiError(Complete({}), 401, "invalid_api_key"));
}

TEST_F(RateLimitTest, UnknownApiKeyGets401) {
  EXPECT_TRUE(
      IsOpenAiError(Complete({{"Authorization", "Bearer not-a-key"}}), 401, "invalid_api_key"));
  EXPECT_TRUE(IsOpenAiError(Complete({{"Authorization", "test-key-a"}}), 401, "invalid_api_key"))
      << "a key without the Bearer scheme";
}

TEST_F(RateLimitTest, ModelsNeedAKeyHealthAndMetricsDoNot) {
  EXPECT_TRUE(IsOpenAiError(client().Get("/v1/models"), 401, "invalid_api_key"));
  EXPECT_TRUE(IsOpenAiError(client().Get("/v1/models/spillway-emulated"), 401, "invalid_api_key"));
  for (const char* target : {"/v1/models", "/v1/models/spillway-emulated"}) {
    const HttpResponse r = client().Send({"GET", target, "", kKeyB});
    EXPECT_EQ(r.status, 200) << target << ": " << r.error << r.body;
  }
  EXPECT_EQ(client().Get("/health").status, 200);
  EXPECT_EQ(client().Get("/metrics").status, 200);
}

TEST_F(RateLimitTest, ThirdRapidRequestOfLimitedTenantGets429RateLimited) {
  const auto start = std::chrono::steady_clock::now();
  const HttpResponse first = Complete(kKeyA);
  const HttpResponse second = Complete(kKeyA);
  const HttpResponse third = Complete(kKeyA);
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  SCOPED_TRACE("three requests took " + std::to_string(elapsed_s) + " s");
  EXPECT_EQ(first.status, 200) << first.error << first.body;
  EXPECT_EQ(second.status, 200) << second.error << second.body;
  EXPECT_TRUE(IsOpenAiError(third, 429, "rate_limited"));
  EXPECT_EQ(third.Header("X-Overload-Reason"), "rate_limited");

  const std::string retry_after = third.Header("Retry-After").value_or("");
  ASSERT_FALSE(retry_after.empty());
  EXPECT_GE(std::stoi(retry_after), 1) << retry_after;
  // X-RateLimit-Reset: the Unix time at which the bucket has a token again.
  const std::string reset = third.Header("X-RateLimit-Reset").value_or("");
  ASSERT_FALSE(reset.empty());
  const long long reset_s = std::stoll(reset);
  const long long now_s = static_cast<long long>(std::time(nullptr));
  EXPECT_GE(reset_s, now_s - 1) << reset;
  EXPECT_LE(reset_s, now_s + 5) << reset;

  const std::string metrics = Metrics();
  EXPECT_GE(
      server_test::MetricSum(metrics, "spillway_admission_decisions_total",
                             {{"decision", "reject"}, {"reason", "rate_limited"}, {"tenant", "a"}}),
      1)
      << metrics;
}

TEST_F(RateLimitTest, UnlimitedTenantIsServedWhileLimitedTenantIsRejected) {
  for (int i = 0; i < 3; ++i) {
    Complete(kKeyA);
  }
  ASSERT_EQ(Complete(kKeyA).status, 429) << "tenant a should be over its limit";
  for (int i = 0; i < 6; ++i) {
    const HttpResponse r = Complete(kKeyB);
    EXPECT_EQ(r.status, 200) << "tenant b request " << i << ": " << r.error << r.body;
  }
}

TEST_F(RateLimitTest, PriorityClassIsHonouredOnlyDownToTheKeysHighestClass) {
  const HeaderList key_c = {{"Authorization", "bearer test-key-c"}};  // scheme in any case
  auto applied = [&](const std::string& asked) {
    HeaderList headers = key_c;
    if (!asked.empty()) {
      headers.emplace_back("X-Priority-Class", asked);
    }
    const HttpResponse r = Complete(headers);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Header("X-Priority-Class").value_or("none");
  };
  EXPECT_EQ(applied(""), "1") << "no header: the key's highest class";
  EXPECT_EQ(applied("0"), "1") << "a class more urgent than the key allows is capped";
  EXPECT_EQ(applied("3"), "3") << "a less urgent class is honoured";
  EXPECT_EQ(applied("1048576"), "1048576") << "the most patient class of a scenario";
  // Not a class: negative, beyond the scenarios' range (99999999999 overflowed to "must be an
  // integer >= 0"), or given twice.
  for (const HeaderList& bad :
       {HeaderList{{"X-Priority-Class", "-1"}}, HeaderList{{"X-Priority-Class", "1048577"}},
        HeaderList{{"X-Priority-Class", "99999999999"}},
        HeaderList{{"X-Priority-Class", "2"}, {"X-Priority-Class", "3"}}}) {
    HeaderList headers = key_c;
    headers.insert(headers.end(), bad.begin(), bad.end());
    const HttpResponse r = Complete(headers);
    EXPECT_TRUE(IsOpenAiError(r, 400, "invalid_priority")) << bad.front().second << r.body;
    EXPECT_NE(r.body.find("given once, as an integer in [0, 1048576]"), std::string::npos)
        << r.body;
  }
}

}  // namespace
}  // namespace spillway
