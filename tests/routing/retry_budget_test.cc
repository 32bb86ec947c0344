#include "routing/retry_budget.h"

#include <gtest/gtest.h>

namespace spillway::routing {
namespace {

TEST(RetryBudgetTest, RetriesAreATenthOfRequestsOverTheWindow) {
  RetryBudget b(0.1, 10, 0);
  for (int i = 0; i < 100; ++i) {
    b.OnRequest(0.5);
  }
  int sent = 0;
  while (b.TryRetry(0.5)) {
    ++sent;
  }
  EXPECT_EQ(sent, 10);
  EXPECT_FALSE(b.TryRetry(9.9)) << "still inside the window";
  EXPECT_FALSE(b.TryRetry(11.0)) << "the window moved past the requests: 0 allowed";
}

TEST(RetryBudgetTest, MinRetriesAreAlwaysAllowedInAWindow) {
  RetryBudget b(0.1, 10, 3);
  b.OnRequest(0);
  EXPECT_TRUE(b.TryRetry(0));
  EXPECT_TRUE(b.TryRetry(0));
  EXPECT_TRUE(b.TryRetry(0));
  EXPECT_FALSE(b.TryRetry(0));
  EXPECT_TRUE(b.TryRetry(20)) << "a new window";
}

}  // namespace
}  // namespace spillway::routing
