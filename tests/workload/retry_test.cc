// RetryPlanner: the scenario client's retry decision (docs/scenarios.md, `client.retry`).

#include "workload/retry.h"

#include <gtest/gtest.h>

#include <optional>

namespace spillway {
namespace {

ClientBehaviour FixedRetries(std::int32_t max_attempts, Seconds interval_s) {
  ClientBehaviour c;
  c.retry = RetryPolicy::kFixed;
  c.max_attempts = max_attempts;
  c.retry_interval_s = interval_s;
  return c;
}

ClientBehaviour Backoff(std::int32_t max_attempts) {
  ClientBehaviour c;
  c.retry = RetryPolicy::kBackoffJitter;
  c.max_attempts = max_attempts;
  c.backoff_base_s = 1.0;
  c.backoff_max_s = 30.0;
  c.jitter_s = 0.5;
  return c;
}

TEST(RetryPlannerTest, NoneNeverRetries) {
  const ClientBehaviour c;
  RetryPlanner p(c);
  Rng rng(1);
  p.OnFirstAttempt();
  EXPECT_FALSE(p.Next(1, 2.0, rng).has_value());
}

TEST(RetryPlannerTest, FixedSleepsTheIntervalUntilMaxAttempts) {
  const ClientBehaviour c = FixedRetries(3, 0.1);
  RetryPlanner p(c);
  Rng rng(1);
  EXPECT_EQ(p.Next(1, 5.0, rng), 0.1);  // Retry-After is ignored
  EXPECT_EQ(p.Next(2, 0.0, rng), 0.1);
  EXPECT_FALSE(p.Next(3, 0.0, rng).has_value());
}

TEST(RetryPlannerTest, FixedDrawsNoRandomness) {
  const ClientBehaviour c = FixedRetries(5, 0.2);
  RetryPlanner p(c);
  Rng used(7);
  Rng fresh(7);
  ASSERT_TRUE(p.Next(1, 0, used).has_value());
  EXPECT_EQ(used.Next(), fresh.Next());
}

TEST(RetryPlannerTest, BackoffDoublesFromRetryAfterOrBaseAndAddsJitter) {
  const ClientBehaviour c = Backoff(10);
  RetryPlanner p(c);
  Rng rng(3);
  Rng mirror(3);
  // With Retry-After 2: 2 * 2^(attempts - 1) + U[0, 0.5).
  EXPECT_DOUBLE_EQ(*p.Next(1, 2.0, rng), 2.0 + mirror.Uniform(0, 0.5));
  EXPECT_DOUBLE_EQ(*p.Next(3, 2.0, rng), 8.0 + mirror.Uniform(0, 0.5));
  // No Retry-After: base_s 1.
  EXPECT_DOUBLE_EQ(*p.Next(2, 0.0, rng), 2.0 + mirror.Uniform(0, 0.5));
  // Capped at max_backoff_s.
  EXPECT_DOUBLE_EQ(*p.Next(9, 2.0, rng), 30.0 + mirror.Uniform(0, 0.5));
}

TEST(RetryPlannerTest, BackoffIgnoresRetryAfterWhenAsked) {
  ClientBehaviour c = Backoff(5);
  c.use_retry_after = false;
  c.jitter_s = 0;
  RetryPlanner p(c);
  Rng rng(1);
  EXPECT_DOUBLE_EQ(*p.Next(2, 7.0, rng), 2.0);
}

TEST(RetryPlannerTest, BudgetAllowsOneRetryPerWholeToken) {
  ClientBehaviour c = FixedRetries(10, 0.1);
  c.retry_budget = 0.5;
  RetryPlanner p(c);
  Rng rng(1);
  EXPECT_FALSE(p.Next(1, 0, rng).has_value());  // no tokens yet
  p.OnFirstAttempt();
  EXPECT_FALSE(p.Next(1, 0, rng).has_value());  // half a token is not enough
  p.OnFirstAttempt();
  EXPECT_TRUE(p.Next(1, 0, rng).has_value());  // one token, spent
  EXPECT_DOUBLE_EQ(p.tokens(), 0.0);
  EXPECT_FALSE(p.Next(2, 0, rng).has_value());
}

TEST(RetryPlannerTest, BudgetTokensAreCapped) {
  ClientBehaviour c = FixedRetries(10, 0.1);
  c.retry_budget = 100;
  RetryPlanner p(c);
  for (int i = 0; i < 50; ++i) {
    p.OnFirstAttempt();
  }
  EXPECT_DOUBLE_EQ(p.tokens(), RetryPlanner::kMaxRetryTokens);
}

TEST(RetryPlannerTest, MaxAttemptsIsCheckedBeforeTheBudgetIsSpent) {
  ClientBehaviour c = FixedRetries(2, 0.1);
  c.retry_budget = 1;
  RetryPlanner p(c);
  Rng rng(1);
  p.OnFirstAttempt();
  EXPECT_FALSE(p.Next(2, 0, rng).has_value());
  EXPECT_DOUBLE_EQ(p.tokens(), 1.0);
}

}  // namespace
}  // namespace spillway
