// The gateway's rate_limit section and the keys' token and retry rates (gateway_config.h,
// config/server_config.h): values read, and errors that name the file, line and field.

#include <gtest/gtest.h>

#include "common/config_error_of.h"
#include "gateway/gateway_config.h"
#include "gateway/shared_quota.h"
#include "net/redis_client.h"

namespace spillway::gateway {
namespace {

using testing_util::ErrorOf;

TEST(RateLimitConfigTest, ReadsTheSectionAndTheKeysRates) {
  const GatewayConfig c = LoadGatewayConfigFromString(R"(
rate_limit:
  redis: redis://127.0.0.1:6380
  decision_budget_s: 0.002
  on_unavailable: fail_close
  gateways: 3
  key_prefix: prod
  retry_window_s: 30
  reserve_max_tokens: 512
api_keys:
  - {key: k1, tenant: a, rate_rps: 10, burst: 20, tokens_per_s: 5000, token_burst: 20000,
     retry_rps: 1, retry_burst: 3}
  - {key: k2, tenant: a, rate_rps: 99, tokens_per_s: 1}
  - {key: k3, tenant: b, tokens_per_s: 100}
)",
                                                      "gw.yaml");
  const RateLimitConfig& r = c.rate_limit;
  EXPECT_TRUE(r.shared());
  EXPECT_EQ(r.redis, "redis://127.0.0.1:6380");
  EXPECT_EQ(r.decision_budget_s, 0.002);
  EXPECT_FALSE(r.fail_open);
  EXPECT_EQ(r.gateways, 3);
  EXPECT_EQ(r.key_prefix, "prod");
  EXPECT_EQ(r.retry_window_s, 30);
  EXPECT_EQ(r.reserve_max_tokens, 512);
  EXPECT_FALSE(r.fixed_window);

  // The first key of a tenant that sets a rate sets it; token_burst defaults to a second's.
  const auto limits = QuotaLimitsOf(c.api_keys, /*with_requests=*/true);
  const TenantQuotaLimits& a = limits.at("a");
  ASSERT_TRUE(a.requests && a.tokens && a.retries);
  EXPECT_EQ(a.requests->rate_per_s, 10);
  EXPECT_EQ(a.requests->burst, 20);
  EXPECT_EQ(a.tokens->rate_per_s, 5000);
  EXPECT_EQ(a.tokens->burst, 20000);
  EXPECT_EQ(a.retries->rate_per_s, 1);
  EXPECT_EQ(a.retries->burst, 3);
  const TenantQuotaLimits& b = limits.at("b");
  EXPECT_FALSE(b.requests.has_value());
  EXPECT_EQ(b.tokens->burst, 100);
  EXPECT_FALSE(b.retries.has_value());
  // Alone (no Redis), the request rate is the door's bucket at the request's head.
  EXPECT_FALSE(QuotaLimitsOf(c.api_keys, false).at("a").requests.has_value());
}

TEST(RateLimitConfigTest, DefaultsDecideAloneAndFailOpen) {
  const RateLimitConfig r = LoadGatewayConfigFromString("", "gw.yaml").rate_limit;
  EXPECT_FALSE(r.shared());
  EXPECT_TRUE(r.fail_open);
  EXPECT_EQ(r.decision_budget_s, 0.005);
  EXPECT_EQ(r.retry_window_s, 10);
}

TEST(RateLimitConfigTest, ErrorsNameTheLineAndField) {
  EXPECT_EQ(ErrorOf([] {
              LoadGatewayConfigFromString("rate_limit:\n  redis: localhost:6379\n", "gw.yaml");
            }),
            "gw.yaml:2: rate_limit.redis: must be redis://IP[:PORT] or unix:///PATH, got "
            "'localhost:6379'");
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString("rate_limit: {redis: \"redis://redis.local\"}\n", "g");
            }).find("names are not resolved"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString("rate_limit: {on_unavailable: open}\n", "g");
            }).find("rate_limit.on_unavailable: must be fail_open or fail_close"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString("rate_limit: {decision_budget_s: 0}\n", "g");
            }).find("rate_limit.decision_budget_s"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString("rate_limit: {redis_url: x}\n", "g");
            }).find("redis_url"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString("api_keys: [{key: k, tenant: t, tokens_per_s: -1}]\n",
                                          "g");
            }).find("api_keys[0].tokens_per_s"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString("api_keys: [{key: k, tenant: t, retry_burst: 0}]\n", "g");
            }).find("retry_burst: must be in [1, 1e12]"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString(
                  "rate_limit: {redis: \"redis://127.0.0.1\", algorithm: fixed_window}\n"
                  "api_keys: [{key: k, tenant: t, tokens_per_s: 5}]\n",
                  "g");
            }).find("rate_limit.algorithm: fixed_window limits the request rate only"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              LoadGatewayConfigFromString("rate_limit: {algorithm: fixed_window}\n", "g");
            }).find("set rate_limit.redis"),
            std::string::npos);
}

TEST(RateLimitConfigTest, RedisUrls) {
  std::string error;
  const auto tcp = net::ParseRedisUrl("redis://10.0.0.5:7000", &error);
  ASSERT_TRUE(tcp.has_value());
  EXPECT_EQ(tcp->host, "10.0.0.5");
  EXPECT_EQ(tcp->port, 7000);
  EXPECT_EQ(net::ParseRedisUrl("redis://127.0.0.1", &error)->port, 6379);
  EXPECT_EQ(net::ParseRedisUrl("unix:///run/redis.sock", &error)->unix_path, "/run/redis.sock");
  EXPECT_FALSE(net::ParseRedisUrl("unix://relative.sock", &error).has_value());
  EXPECT_FALSE(net::ParseRedisUrl("redis://127.0.0.1:0", &error).has_value());
  EXPECT_FALSE(net::ParseRedisUrl("redis://127.0.0.1:x", &error).has_value());
  EXPECT_FALSE(net::ParseRedisUrl("http://127.0.0.1:6379", &error).has_value());
}

TEST(RateLimitConfigTest, ServeDoesNotTakeTheGatewaysRates) {
  EXPECT_NE(ErrorOf([] {
              server::LoadServerConfigFromString(
                  "api_keys: [{key: k, tenant: t, tokens_per_s: 5}]\n", "serve.yaml");
            }).find("tokens_per_s"),
            std::string::npos);
}

TEST(RateLimitConfigTest, RatesBurstsAndUrlsRedisCannotTake) {
  const auto error = [](const std::string& yaml) {
    return ErrorOf([&] { LoadGatewayConfigFromString(yaml, "g"); });
  };
  EXPECT_NE(error("api_keys: [{key: k, tenant: t, rate_rps: 1e-300}]\n")
                .find("rate_rps: must be 0 (no limit) or in [1e-6, 1e12]"),
            std::string::npos);
  EXPECT_NE(error("api_keys: [{key: k, tenant: t, rate_rps: 1e300}]\n").find("rate_rps"),
            std::string::npos);
  EXPECT_NE(error("api_keys: [{key: k, tenant: t, token_burst: 50}]\n")
                .find("token_burst: needs tokens_per_s"),
            std::string::npos);
  EXPECT_NE(error("api_keys: [{key: k, tenant: t, retry_burst: 2}]\n")
                .find("retry_burst: needs retry_rps"),
            std::string::npos);
  EXPECT_NE(error("rate_limit: {redis: \"redis://:secret@127.0.0.1:6379\"}\n")
                .find("password (AUTH) is not supported"),
            std::string::npos);
  EXPECT_NE(error("rate_limit: {redis: \"redis://127.0.0.1:6379/3\"}\n")
                .find("a database number is not supported"),
            std::string::npos);
  EXPECT_NE(error("rate_limit: {redis: \"\"}\n").find("must name a Redis"), std::string::npos);
}

TEST(RateLimitConfigTest, ATenantsKeysAreOneHashSlotWhateverItsName) {
  EXPECT_EQ(QuotaKey("spillway", "acme", "tokens"), "spillway:{acme}:tokens");
  EXPECT_EQ(QuotaKey("p", "}x", "requests"), "p:{%7Dx}:requests");
  EXPECT_EQ(QuotaKey("p", "a}{b", "requests"), "p:{a%7D%7Bb}:requests");
  EXPECT_NE(QuotaKey("p", "%7D", "r"), QuotaKey("p", "}", "r"));
}

TEST(RateLimitConfigTest, RequestIdentityIsTheKeyElseTheBody) {
  EXPECT_EQ(RequestIdentity("abc", "body 1"), RequestIdentity("abc", "body 2"));
  EXPECT_NE(RequestIdentity("", "body 1"), RequestIdentity("", "body 2"));
  EXPECT_NE(RequestIdentity("body", ""), RequestIdentity("", "body"));
  EXPECT_EQ(RequestIdentity("", "x"), RequestIdentity("", "x"));
}

}  // namespace
}  // namespace spillway::gateway
