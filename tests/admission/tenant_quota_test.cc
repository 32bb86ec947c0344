// TenantQuota (admission/tenant_quota.h): request, token and retry rates of one tenant,
// decided together; the gateway's local mirror of its Redis script.

#include "admission/tenant_quota.h"

#include <gtest/gtest.h>

namespace spillway {
namespace {

TenantQuotaLimits Limits(std::optional<GcraLimit> requests, std::optional<GcraLimit> tokens,
                         std::optional<GcraLimit> retries) {
  return {requests, tokens, retries};
}

TEST(TenantQuotaTest, EachLimitRefusesWithItsOwnReason) {
  TenantQuota q(/*retry_window_s=*/10);
  const TenantQuotaLimits l = Limits(GcraLimit{1, 2}, GcraLimit{100, 300}, GcraLimit{0.1, 1});
  EXPECT_TRUE(q.Decide(l, {"a", 100, "x1"}, 0).allowed());
  EXPECT_TRUE(q.Decide(l, {"a", 100, "x2"}, 0).allowed());
  const QuotaDecision requests = q.Decide(l, {"a", 100, "x3"}, 0);
  EXPECT_EQ(requests.refused_by, QuotaLimit::kRequests);
  EXPECT_EQ(QuotaReason(requests.refused_by), "rate_limited");
  EXPECT_NEAR(requests.retry_after_s, 1, 1e-9);

  // Two seconds on, both buckets are full again: 250 of the 300 tokens, then a second later
  // 160 are 10 (0.1 s) too many.
  EXPECT_TRUE(q.Decide(l, {"a", 250, "x4"}, 2).allowed());
  const QuotaDecision tokens = q.Decide(l, {"a", 160, "x5"}, 3);
  EXPECT_EQ(tokens.refused_by, QuotaLimit::kTokens);
  EXPECT_EQ(QuotaReason(tokens.refused_by), "token_rate_limited");
  EXPECT_NEAR(tokens.retry_after_s, 0.1, 1e-9);

  // x1 again: a retry, which also spends the retry bucket (burst 1, one each 10 s).
  const QuotaDecision retry = q.Decide(l, {"a", 10, "x1"}, 3);
  EXPECT_TRUE(retry.allowed());
  EXPECT_TRUE(retry.retry);
  const QuotaDecision again = q.Decide(l, {"a", 10, "x1"}, 4);
  EXPECT_TRUE(again.retry);
  EXPECT_EQ(again.refused_by, QuotaLimit::kRetries);
  EXPECT_EQ(QuotaReason(again.refused_by), "retry_rate_limited");
}

TEST(TenantQuotaTest, ARefusalSpendsNoLimit) {
  TenantQuota q(10);
  const TenantQuotaLimits l = Limits(GcraLimit{1, 2}, GcraLimit{100, 100}, std::nullopt);
  EXPECT_TRUE(q.Decide(l, {"a", 80, ""}, 0).allowed());
  // The token limit refuses 50; had the request limit been spent, it would refuse the next.
  EXPECT_EQ(q.Decide(l, {"a", 50, ""}, 0).refused_by, QuotaLimit::kTokens);
  EXPECT_TRUE(q.Decide(l, {"a", 20, ""}, 0).allowed());
  EXPECT_EQ(q.Decide(l, {"a", 0, ""}, 0).refused_by, QuotaLimit::kRequests);
}

TEST(TenantQuotaTest, ACostOverTheBurstPassesOnlyFromAFullBucket) {
  TenantQuota q(10);
  const TenantQuotaLimits l = Limits(std::nullopt, GcraLimit{100, 100}, std::nullopt);
  EXPECT_TRUE(q.Decide(l, {"a", 500, ""}, 0).allowed());
  EXPECT_EQ(q.Decide(l, {"a", 500, ""}, 0.5).refused_by, QuotaLimit::kTokens);
  EXPECT_TRUE(q.Decide(l, {"a", 500, ""}, 1).allowed());
}

TEST(TenantQuotaTest, TenantsAreApartAndAnIdentityIsATenants) {
  TenantQuota q(10);
  const TenantQuotaLimits l = Limits(GcraLimit{1, 1}, std::nullopt, GcraLimit{1, 1});
  EXPECT_TRUE(q.Decide(l, {"a", 0, "same"}, 0).allowed());
  const QuotaDecision b = q.Decide(l, {"b", 0, "same"}, 0);
  EXPECT_TRUE(b.allowed());
  EXPECT_FALSE(b.retry);  // the same body from another tenant is not a retry
}

TEST(TenantQuotaTest, AnIdentityIsForgottenAfterTheWindow) {
  TenantQuota q(/*retry_window_s=*/5);
  const TenantQuotaLimits l = Limits(std::nullopt, std::nullopt, GcraLimit{1, 1});
  EXPECT_FALSE(q.Decide(l, {"a", 0, "k"}, 0).retry);
  EXPECT_TRUE(q.Decide(l, {"a", 0, "k"}, 4).retry);
  EXPECT_TRUE(q.Decide(l, {"a", 0, "k"}, 8.9).retry);  // seen again at 4: the window restarts
  EXPECT_FALSE(q.Decide(l, {"a", 0, "k"}, 14).retry);
}

TEST(TenantQuotaTest, RemembersAtMostMaxIdentities) {
  TenantQuota q(/*retry_window_s=*/100, /*max_identities=*/3);
  const TenantQuotaLimits l = Limits(std::nullopt, std::nullopt, GcraLimit{100, 100});
  for (const char* id : {"1", "2", "3", "4", "5"}) {
    EXPECT_FALSE(q.Decide(l, {"a", 0, id}, 0).retry);
  }
  EXPECT_FALSE(q.Decide(l, {"a", 0, "1"}, 1).retry);  // forgotten: the oldest went first
  EXPECT_TRUE(q.Decide(l, {"a", 0, "5"}, 1).retry);
}

TEST(TenantQuotaTest, AShareDividesEveryRateAndBurst) {
  TenantQuota q(10);
  const TenantQuotaLimits l = Limits(GcraLimit{10, 4}, std::nullopt, std::nullopt);
  int allowed = 0;
  for (int i = 0; i < 10; ++i) {
    allowed += q.Decide(l, {"a", 0, ""}, 0, /*share=*/0.5).allowed() ? 1 : 0;
  }
  EXPECT_EQ(allowed, 2);  // a burst of 4 / 2
  EXPECT_FALSE(q.Decide(l, {"a", 0, ""}, 0.19, 0.5).allowed());
  EXPECT_TRUE(q.Decide(l, {"a", 0, ""}, 0.21, 0.5).allowed());  // 5 a second
}

TEST(TenantQuotaTest, TokensGivenBackCanBeSpentAgain) {
  TenantQuota q(10);
  const TenantQuotaLimits l = Limits(std::nullopt, GcraLimit{10, 100}, std::nullopt);
  ASSERT_TRUE(q.Decide(l, {"a", 100, ""}, 0).allowed());
  EXPECT_FALSE(q.Decide(l, {"a", 60, ""}, 0).allowed());
  q.AdjustTokens(l, "a", -70, 0);  // the reply used 30 of the 100 reserved
  EXPECT_TRUE(q.Decide(l, {"a", 60, ""}, 0).allowed());
}

TEST(TenantQuotaTest, TheTokensChargedAreTheReservationOrTheBurst) {
  TenantQuota q(10);
  const TenantQuotaLimits l = Limits(std::nullopt, GcraLimit{10, 200}, std::nullopt);
  EXPECT_EQ(q.Decide(l, {"a", 150, ""}, 0).tokens_charged, 150);
  EXPECT_EQ(q.Decide(l, {"b", 258, ""}, 0).tokens_charged, 200);  // a correction starts here
  EXPECT_EQ(q.Decide(l, {"c", 258, ""}, 0, /*share=*/0.5).tokens_charged, 100);
}

TEST(TenantQuotaTest, ChargeSpendsWithoutRefusingSoAFallBackFindsTheBucketAsSpent) {
  TenantQuota q(10);
  const TenantQuotaLimits l = Limits(GcraLimit{10, 4}, std::nullopt, GcraLimit{1, 1});
  // Four admitted elsewhere (Redis), then a fall back to this mirror at the same instant.
  for (int i = 0; i < 4; ++i) {
    q.Charge(l, {"a", 0, "id"}, 0);
  }
  EXPECT_EQ(q.Decide(l, {"a", 0, ""}, 0).refused_by, QuotaLimit::kRequests);
  EXPECT_TRUE(q.Decide(l, {"a", 0, ""}, 0.1).allowed());
  // Fifty more at once: the bucket is empty, not fifty in debt (a refill later it allows).
  for (int i = 0; i < 50; ++i) {
    q.Charge(l, {"a", 0, ""}, 0.1);
  }
  EXPECT_FALSE(q.Decide(l, {"a", 0, ""}, 0.1).allowed());
  EXPECT_TRUE(q.Decide(l, {"a", 0, ""}, 0.2).allowed());
  // The identity charged was remembered, and its retries emptied the retry bucket.
  const QuotaDecision retry = q.Decide(l, {"a", 0, "id"}, 0.3);
  EXPECT_TRUE(retry.retry);
  EXPECT_EQ(retry.refused_by, QuotaLimit::kRetries);  // three retries charged, burst 1
}

TEST(TenantQuotaTest, ARequestCostOfZeroLeavesTheRequestLimitToTheDoor) {
  TenantQuota q(10);
  const TenantQuotaLimits l = Limits(GcraLimit{1, 1}, std::nullopt, std::nullopt);
  for (int i = 0; i < 5; ++i) {
    QuotaAsk ask{"a", 0, ""};
    ask.request_cost = 0;
    EXPECT_TRUE(q.Decide(l, ask, 0).allowed());
  }
}

}  // namespace
}  // namespace spillway
