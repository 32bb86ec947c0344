// GCRA (admission/gcra.h): a bucket kept as its theoretical arrival time; over any span of d
// seconds at most rate * d + burst units pass.

#include "admission/gcra.h"

#include <gtest/gtest.h>

namespace spillway {
namespace {

TEST(GcraTest, AllowsTheBurstAtOnceThenOneUnitPerInterval) {
  const GcraLimit limit{/*rate_per_s=*/10, /*burst=*/3};
  Seconds tat = 0;
  for (int i = 0; i < 3; ++i) {
    const GcraDecision d = GcraDecide(tat, /*now=*/100, limit, 1);
    ASSERT_TRUE(d.allowed) << i;
    tat = d.tat;
  }
  const GcraDecision refused = GcraDecide(tat, 100, limit, 1);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.tat, tat);  // a refusal spends nothing
  EXPECT_NEAR(refused.retry_after_s, 0.1, 1e-9);
  EXPECT_TRUE(GcraDecide(tat, 100.1, limit, 1).allowed);
}

TEST(GcraTest, NeverAllowsMoreThanRateTimesSpanPlusBurst) {
  // Offered three times the rate for 60 s, at evenly spaced instants.
  const GcraLimit limit{/*rate_per_s=*/20, /*burst=*/5};
  Seconds tat = 0;
  int allowed = 0;
  const int offered = 3 * 20 * 60;
  for (int i = 0; i < offered; ++i) {
    const Seconds now = 1000 + 60.0 * i / offered;
    const GcraDecision d = GcraDecide(tat, now, limit, 1);
    if (d.allowed) {
      ++allowed;
      tat = d.tat;
    }
  }
  EXPECT_LE(allowed, 20 * 60 + 5);
  EXPECT_GE(allowed, 20 * 60 + 5 - 2);
}

TEST(GcraTest, ACostTakesThatManyUnitsAndACostOverTheBurstTakesTheWholeBucket) {
  const GcraLimit limit{/*rate_per_s=*/100, /*burst=*/200};
  GcraDecision d = GcraDecide(0, 10, limit, 150);
  ASSERT_TRUE(d.allowed);
  EXPECT_FALSE(GcraDecide(d.tat, 10, limit, 51).allowed);
  EXPECT_TRUE(GcraDecide(d.tat, 10, limit, 50).allowed);
  // 1,000 units against a burst of 200: only from a full bucket, emptying it.
  EXPECT_FALSE(GcraDecide(d.tat, 10, limit, 1000).allowed);
  d = GcraDecide(0, 10, limit, 1000);
  ASSERT_TRUE(d.allowed);
  EXPECT_NEAR(d.tat, 12, 1e-9);
}

TEST(GcraTest, AdjustGivesBackAndChargesButNeverBelowNow) {
  const GcraLimit limit{/*rate_per_s=*/100, /*burst=*/200};
  const GcraDecision d = GcraDecide(0, 10, limit, 200);  // empty
  ASSERT_TRUE(d.allowed);
  EXPECT_FALSE(GcraDecide(d.tat, 10, limit, 100).allowed);
  const Seconds refunded = GcraAdjust(d.tat, 10, limit, -150);  // 150 tokens unused
  EXPECT_NEAR(refunded, 10.5, 1e-9);
  EXPECT_TRUE(GcraDecide(refunded, 10, limit, 100).allowed);
  EXPECT_EQ(GcraAdjust(refunded, 10, limit, -1e6), 10);    // a full bucket stays full
  EXPECT_NEAR(GcraAdjust(10, 10, limit, 50), 10.5, 1e-9);  // more used than reserved
}

}  // namespace
}  // namespace spillway
