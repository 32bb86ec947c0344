#include "routing/cascade.h"

#include <gtest/gtest.h>

namespace spillway::routing {
namespace {

TEST(CascadeTest, RefusalsForLoadGoOnAndWhatNoOtherModelChangesStays) {
  for (const char* reason :
       {"queue_delay_exceeded", "queue_deadline_exceeded", "kv_saturation", "queue_full",
        "queued_tokens_full", "deadline_unreachable", "no_endpoint", "upstream_unavailable",
        "draining", "preemption_limit", ""}) {
    EXPECT_TRUE(CascadesOn(reason)) << "'" << reason << "'";
  }
  for (const char* reason : {"rate_limited", "request_timeout", "context_length_exceeded",
                             "kv_capacity_exceeded", "max_tokens_exceeds_deadline"}) {
    EXPECT_FALSE(CascadesOn(reason)) << reason;
  }
}

TEST(CascadeTest, TheNextPoolGetsWhatIsLeftOfTheTtftBudget) {
  EXPECT_DOUBLE_EQ(CascadeBudget(1.0, 0.0).value_or(-1), 1.0);
  EXPECT_DOUBLE_EQ(CascadeBudget(1.0, 0.3).value_or(-1), 0.7);
  EXPECT_FALSE(CascadeBudget(1.0, 1.0 - kMinCascadeBudgetS / 2).has_value());
  EXPECT_FALSE(CascadeBudget(1.0, 2.0).has_value());
}

}  // namespace
}  // namespace spillway::routing
