// TokenBucket: `rate` tokens per second refill a bucket of capacity `burst`; one token per
// request; time is passed in (token_bucket.h).

#include "admission/token_bucket.h"

#include <gtest/gtest.h>

namespace spillway {
namespace {

constexpr double kExact = 1e-12;

TEST(TokenBucketTest, StartsFull) {
  const TokenBucket bucket(/*rate_per_s=*/2, /*burst=*/5, /*now=*/10);
  EXPECT_EQ(bucket.tokens(10), 5);
  EXPECT_EQ(bucket.rate_per_s(), 2);
  EXPECT_EQ(bucket.burst(), 5);
  EXPECT_EQ(bucket.TimeUntilAvailable(10), 0);
}

TEST(TokenBucketTest, AllowsABurstThenRefusesAtTheSameInstant) {
  TokenBucket bucket(/*rate_per_s=*/1, /*burst=*/3, /*now=*/0);
  EXPECT_TRUE(bucket.TryTake(0));
  EXPECT_TRUE(bucket.TryTake(0));
  EXPECT_TRUE(bucket.TryTake(0));
  EXPECT_FALSE(bucket.TryTake(0));
  EXPECT_FALSE(bucket.TryTake(0));
  EXPECT_NEAR(bucket.tokens(0), 0, kExact);
}

TEST(TokenBucketTest, RefusedAttemptsDoNotSpendTokens) {
  TokenBucket bucket(/*rate_per_s=*/0.5, /*burst=*/1, /*now=*/0);
  ASSERT_TRUE(bucket.TryTake(0));
  EXPECT_FALSE(bucket.TryTake(1));  // 0.5 tokens: refused
  EXPECT_FALSE(bucket.TryTake(1.5));
  EXPECT_TRUE(bucket.TryTake(2));  // exactly one token after 2 s despite the refusals
}

TEST(TokenBucketTest, RefillsAtTheRateOverVirtualTime) {
  TokenBucket bucket(/*rate_per_s=*/4, /*burst=*/10, /*now=*/0);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(bucket.TryTake(0));
  }
  EXPECT_NEAR(bucket.tokens(0.5), 2, kExact);
  EXPECT_TRUE(bucket.TryTake(0.5));
  EXPECT_TRUE(bucket.TryTake(0.5));
  EXPECT_FALSE(bucket.TryTake(0.5));
  EXPECT_TRUE(bucket.TryTake(0.75));  // one more token after 1/4 s
}

TEST(TokenBucketTest, NeverHoldsMoreThanTheBurst) {
  TokenBucket bucket(/*rate_per_s=*/100, /*burst=*/3, /*now=*/0);
  ASSERT_TRUE(bucket.TryTake(0));
  EXPECT_EQ(bucket.tokens(1000), 3);
  int taken = 0;
  while (bucket.TryTake(1000)) {
    ++taken;
  }
  EXPECT_EQ(taken, 3);
}

TEST(TokenBucketTest, TimeUntilAvailableIsTheRefillTimeOfTheMissingFraction) {
  TokenBucket bucket(/*rate_per_s=*/0.25, /*burst=*/2, /*now=*/0);
  ASSERT_TRUE(bucket.TryTake(0));
  ASSERT_TRUE(bucket.TryTake(0));
  EXPECT_NEAR(bucket.TimeUntilAvailable(0), 4.0, kExact);
  EXPECT_NEAR(bucket.TimeUntilAvailable(1), 3.0, kExact);  // 0.25 tokens already refilled
  EXPECT_NEAR(bucket.TimeUntilAvailable(4), 0.0, kExact);
  EXPECT_EQ(bucket.TimeUntilAvailable(5), 0.0);
}

TEST(TokenBucketTest, TimeGoingBackwardsNeitherRefillsNorUnderflows) {
  TokenBucket bucket(/*rate_per_s=*/1, /*burst=*/1, /*now=*/0);
  ASSERT_TRUE(bucket.TryTake(10));  // the bucket was full; now empty at t = 10
  EXPECT_FALSE(bucket.TryTake(5));  // treated as t = 10: no refill
  EXPECT_NEAR(bucket.tokens(5), 0, kExact);
  EXPECT_NEAR(bucket.TimeUntilAvailable(5), 1.0, kExact);
  EXPECT_TRUE(bucket.TryTake(11));
}

TEST(TokenBucketTest, FractionalBurstStillAllowsOneRequest) {
  TokenBucket bucket(/*rate_per_s=*/1, /*burst=*/1.5, /*now=*/0);
  EXPECT_TRUE(bucket.TryTake(0));
  EXPECT_FALSE(bucket.TryTake(0));
  EXPECT_TRUE(bucket.TryTake(0.5));  // 0.5 + 0.5
}

TEST(TokenBucketDeathTest, RejectsNonPositiveRateAndBurstBelowOne) {
  EXPECT_DEATH(TokenBucket(0, 1, 0), "check failed");
  EXPECT_DEATH(TokenBucket(1, 0.5, 0), "check failed");
}

}  // namespace
}  // namespace spillway
