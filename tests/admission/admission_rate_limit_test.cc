// Per-tenant token buckets in front of the admission policy (admission.h): 429 rate_limited
// with Retry-After from the refill time, isolation between tenants, unlisted tenants unlimited,
// and draining (503) checked before any token is spent.

#include <string_view>

#include <gtest/gtest.h>

#include "admission/admission.h"

namespace spillway {
namespace {

/// Tenant "a": 0.25 req/s, burst 2. Tenant "b": 1 req/s, burst 3. Policy: unbounded, so only
/// the buckets can refuse.
AdmissionConfig TenantConfig() {
  AdmissionConfig config;
  config.policy = AdmissionPolicy::kUnbounded;
  config.tenants["a"] = {.rate_rps = 0.25, .burst = 2};
  config.tenants["b"] = {.rate_rps = 1, .burst = 3};
  return config;
}

AdmissionRequest From(std::string_view tenant) {
  return {.tenant = tenant, .prompt_tokens = 16, .max_output_tokens = 16};
}

const EngineStats kIdle{};

TEST(AdmissionRateLimitTest, AdmitsUpToTheBurstThenRejects429RateLimited) {
  AdmissionController c(TenantConfig(), /*now=*/0);
  EXPECT_TRUE(c.Decide(From("a"), kIdle, 0).admitted());
  EXPECT_TRUE(c.Decide(From("a"), kIdle, 0).admitted());
  const AdmissionDecision d = c.Decide(From("a"), kIdle, 0);
  EXPECT_EQ(d.verdict, Verdict::kShed);
  EXPECT_EQ(d.reason, OverloadReason::kRateLimited);
  EXPECT_EQ(ToString(d.reason), "rate_limited");
  EXPECT_EQ(d.deadline_s, kNever);
}

TEST(AdmissionRateLimitTest, RetryAfterIsTheBucketRefillTimeInWholeSeconds) {
  AdmissionController c(TenantConfig(), /*now=*/0);
  ASSERT_TRUE(c.Decide(From("a"), kIdle, 0).admitted());
  ASSERT_TRUE(c.Decide(From("a"), kIdle, 0).admitted());
  EXPECT_EQ(c.Decide(From("a"), kIdle, 0).retry_after_s, 4.0);    // 1 token at 0.25/s
  EXPECT_EQ(c.Decide(From("a"), kIdle, 1.0).retry_after_s, 3.0);  // 0.25 refilled
  EXPECT_EQ(c.Decide(From("a"), kIdle, 1.5).retry_after_s, 3.0);  // 2.5 s -> 3
}

TEST(AdmissionRateLimitTest, RetryAfterIsAtLeastOneSecond) {
  AdmissionConfig config;
  config.policy = AdmissionPolicy::kUnbounded;
  config.tenants["fast"] = {.rate_rps = 100, .burst = 1};
  AdmissionController c(config, 0);
  ASSERT_TRUE(c.Decide(From("fast"), kIdle, 0).admitted());
  const AdmissionDecision d = c.Decide(From("fast"), kIdle, 0);  // refills in 10 ms
  ASSERT_EQ(d.reason, OverloadReason::kRateLimited);
  EXPECT_EQ(d.retry_after_s, 1.0);
}

TEST(AdmissionRateLimitTest, OneTenantCannotSpendAnothersBucket) {
  AdmissionController c(TenantConfig(), /*now=*/0);
  for (int i = 0; i < 10; ++i) {
    c.Decide(From("a"), kIdle, 0);  // "a" exhausts its own bucket
  }
  ASSERT_FALSE(c.Decide(From("a"), kIdle, 0).admitted());
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(c.Decide(From("b"), kIdle, 0).admitted()) << i;
  }
  EXPECT_FALSE(c.Decide(From("b"), kIdle, 0).admitted());
}

TEST(AdmissionRateLimitTest, UnlistedTenantsAreNotRateLimited) {
  AdmissionController c(TenantConfig(), /*now=*/0);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(c.Decide(From("c"), kIdle, 0).admitted()) << i;
    ASSERT_TRUE(c.Decide(From(""), kIdle, 0).admitted()) << i;
  }
}

TEST(AdmissionRateLimitTest, NoTenantsConfiguredMeansNoRateLimit) {
  AdmissionConfig config;
  config.policy = AdmissionPolicy::kUnbounded;
  AdmissionController c(config, 0);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(c.Decide(From("a"), kIdle, 0).admitted()) << i;
  }
}

TEST(AdmissionRateLimitTest, BucketRefillsOverVirtualTime) {
  AdmissionController c(TenantConfig(), /*now=*/0);
  ASSERT_TRUE(c.Decide(From("a"), kIdle, 0).admitted());
  ASSERT_TRUE(c.Decide(From("a"), kIdle, 0).admitted());
  EXPECT_FALSE(c.Decide(From("a"), kIdle, 3.9).admitted());
  EXPECT_TRUE(c.Decide(From("a"), kIdle, 4.0).admitted());  // one token after 4 s
  EXPECT_FALSE(c.Decide(From("a"), kIdle, 4.0).admitted());
  EXPECT_TRUE(c.Decide(From("a"), kIdle, 8.0).admitted());
}

TEST(AdmissionRateLimitTest, LongIdlePeriodRefillsOnlyUpToTheBurst) {
  AdmissionController c(TenantConfig(), /*now=*/0);
  int admitted = 0;
  for (int i = 0; i < 10; ++i) {
    admitted += c.Decide(From("b"), kIdle, 1000.0).admitted() ? 1 : 0;
  }
  EXPECT_EQ(admitted, 3);
}

TEST(AdmissionRateLimitTest, BucketsStartFullAtTheConstructionTime) {
  AdmissionController c(TenantConfig(), /*now=*/100);
  EXPECT_TRUE(c.Decide(From("a"), kIdle, 100).admitted());
  EXPECT_TRUE(c.Decide(From("a"), kIdle, 100).admitted());
  EXPECT_FALSE(c.Decide(From("a"), kIdle, 100).admitted());
}

TEST(AdmissionRateLimitTest, RateLimitIsCheckedBeforeTheQueueLimits) {
  AdmissionConfig config = TenantConfig();
  config.policy = AdmissionPolicy::kTailDrop;
  config.max_num_queued_reqs = 1;
  AdmissionController c(config, 0);
  EngineStats full;
  full.num_waiting = 5;
  ASSERT_EQ(c.Decide(From("a"), full, 0).reason, OverloadReason::kQueueFull);
  ASSERT_EQ(c.Decide(From("a"), full, 0).reason, OverloadReason::kQueueFull);
  const AdmissionDecision d = c.Decide(From("a"), full, 0);
  EXPECT_EQ(d.verdict, Verdict::kShed);
  EXPECT_EQ(d.reason, OverloadReason::kRateLimited);
}

TEST(AdmissionRateLimitTest, DecideRateLimitAloneChecksOnlyTheBucket) {
  AdmissionController c(TenantConfig(), /*now=*/0);
  const AdmissionDecision first = c.DecideRateLimit(From("a"), 0);
  EXPECT_EQ(first.verdict, Verdict::kAdmit);
  EXPECT_EQ(first.max_output_tokens, 16);
  EXPECT_TRUE(c.DecideRateLimit(From("a"), 0).admitted());
  const AdmissionDecision d = c.DecideRateLimit(From("a"), 0);
  EXPECT_EQ(d.verdict, Verdict::kShed);
  EXPECT_EQ(d.reason, OverloadReason::kRateLimited);
  EXPECT_EQ(d.retry_after_s, 4.0);
}

TEST(AdmissionRateLimitTest, DecidePolicyDoesNotSpendTokens) {
  AdmissionController c(TenantConfig(), /*now=*/0);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(c.DecidePolicy(From("a"), kIdle, 0).admitted());
  }
  EXPECT_TRUE(c.Decide(From("a"), kIdle, 0).admitted());
  EXPECT_TRUE(c.Decide(From("a"), kIdle, 0).admitted());
  EXPECT_FALSE(c.Decide(From("a"), kIdle, 0).admitted());
}

// --- draining ---

TEST(AdmissionDrainingTest, RejectsEveryRequestWith503Draining) {
  AdmissionController c(TenantConfig(), /*now=*/0);
  c.SetDraining(true);
  for (const char* tenant : {"a", "b", "unlisted"}) {
    const AdmissionDecision d = c.Decide(From(tenant), kIdle, 0);
    EXPECT_EQ(d.verdict, Verdict::kHardLimit) << tenant;
    EXPECT_EQ(d.reason, OverloadReason::kDraining) << tenant;
    EXPECT_EQ(ToString(d.reason), "draining");
    EXPECT_GE(d.retry_after_s, 1.0);
    EXPECT_EQ(d.deadline_s, kNever);
  }
}

TEST(AdmissionDrainingTest, DrainingIsCheckedBeforeTheTokenBucketAndSpendsNoToken) {
  AdmissionController c(TenantConfig(), /*now=*/0);
  c.SetDraining(true);
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(c.Decide(From("a"), kIdle, 0).reason, OverloadReason::kDraining);
  }
  c.SetDraining(false);
  EXPECT_TRUE(c.Decide(From("a"), kIdle, 0).admitted());  // the burst of 2 is intact
  EXPECT_TRUE(c.Decide(From("a"), kIdle, 0).admitted());
  EXPECT_EQ(c.Decide(From("a"), kIdle, 0).reason, OverloadReason::kRateLimited);
}

TEST(AdmissionDrainingTest, DrainingOverridesEveryPolicy) {
  for (const AdmissionPolicy policy :
       {AdmissionPolicy::kUnbounded, AdmissionPolicy::kTailDrop, AdmissionPolicy::kPredictive}) {
    AdmissionConfig config;
    config.policy = policy;
    config.estimator.service_rate_prior_rps = 10;
    AdmissionController c(config, 0);
    c.SetDraining(true);
    EXPECT_EQ(c.Decide(From("x"), kIdle, 0).reason, OverloadReason::kDraining) << ToString(policy);
    c.SetDraining(false);
    EXPECT_TRUE(c.Decide(From("x"), kIdle, 0).admitted()) << ToString(policy);
  }
}

}  // namespace
}  // namespace spillway
