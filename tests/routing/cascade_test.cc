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

std::vector<CascadeStep> Order(std::initializer_list<const char*> names) {
  std::vector<CascadeStep> out;
  for (const char* n : names) {
    CascadeStep step{};
    EXPECT_TRUE(ParseCascadeStep(n, &step)) << n;
    out.push_back(step);
  }
  return out;
}

TEST(CascadeOrderTest, StepsParseAndPrintByTheirNames) {
  for (const char* n : {"cache", "primary", "clamp", "fallback", "reject"}) {
    CascadeStep step{};
    ASSERT_TRUE(ParseCascadeStep(n, &step));
    EXPECT_EQ(ToString(step), n);
  }
  CascadeStep step{};
  EXPECT_FALSE(ParseCascadeStep("semantic-cache", &step));
  EXPECT_FALSE(ParseCascadeStep("Primary", &step));
  EXPECT_EQ(DefaultCascadeOrder(), Order({"cache", "primary", "clamp", "fallback", "reject"}));
}

TEST(CascadeOrderTest, AnOrderNamesPrimaryAndEachStepOnceClampAfterItAndRejectLast) {
  EXPECT_EQ(CascadeOrderError(DefaultCascadeOrder()), "");
  EXPECT_EQ(CascadeOrderError(Order({"primary"})), "");
  EXPECT_EQ(CascadeOrderError(Order({"primary", "fallback", "clamp"})), "");
  EXPECT_EQ(CascadeOrderError(Order({"primary", "fallback", "cache"})), "")
      << "the cache only under load";
  EXPECT_NE(CascadeOrderError({}), "");
  EXPECT_NE(CascadeOrderError(Order({"cache", "fallback"})), "");
  EXPECT_NE(CascadeOrderError(Order({"fallback", "primary"})), "");
  EXPECT_NE(CascadeOrderError(Order({"clamp", "primary"})), "");
  EXPECT_NE(CascadeOrderError(Order({"primary", "clamp", "clamp"})), "");
  EXPECT_NE(CascadeOrderError(Order({"primary", "reject", "fallback"})), "");
}

TEST(CascadePlanTest, WithoutAClampThePoolsTakeUpToTheWholeBudgetAndMayWait) {
  const std::vector<CascadeStage> stages = PlanCascade(Order({"primary", "clamp", "fallback"}),
                                                       {DegradeConfig{}, DegradeConfig{}}, true);
  ASSERT_EQ(stages.size(), 2U);
  EXPECT_EQ(stages[0].step, CascadeStep::kPrimary);
  EXPECT_EQ(stages[0].pool, 0U);
  EXPECT_EQ(stages[1].step, CascadeStep::kFallback);
  EXPECT_EQ(stages[1].pool, 1U);
  for (const CascadeStage& s : stages) {
    EXPECT_EQ(s.clamp_max_tokens, 0);
    EXPECT_EQ(s.slo_fraction, 1);
    EXPECT_TRUE(s.may_wait);
  }
}

TEST(CascadePlanTest, AClampedPoolTakesAsAskedOnlyBelowItsThresholdThenClamped) {
  const std::vector<CascadeStage> stages = PlanCascade(
      Order({"primary", "clamp", "fallback"}), {DegradeConfig{64, 0.4}, DegradeConfig{}}, true);
  ASSERT_EQ(stages.size(), 3U);
  EXPECT_EQ(stages[0].step, CascadeStep::kPrimary);
  EXPECT_DOUBLE_EQ(stages[0].slo_fraction, 0.4);
  EXPECT_FALSE(stages[0].may_wait) << "the clamp stage of the same pool follows";
  EXPECT_EQ(stages[1].step, CascadeStep::kClamp);
  EXPECT_EQ(stages[1].pool, 0U);
  EXPECT_EQ(stages[1].clamp_max_tokens, 64);
  EXPECT_EQ(stages[1].slo_fraction, 1);
  EXPECT_TRUE(stages[1].may_wait);
  EXPECT_EQ(stages[2].step, CascadeStep::kFallback);
  EXPECT_EQ(stages[2].pool, 1U);
}

TEST(CascadePlanTest, FallbackBeforeClampOffersTheSmallModelAsAskedFirst) {
  const std::vector<CascadeStage> stages =
      PlanCascade(Order({"primary", "fallback", "clamp", "reject"}),
                  {DegradeConfig{64, 0.5}, DegradeConfig{32, 0.5}}, /*cascade=*/true);
  ASSERT_EQ(stages.size(), 4U);
  EXPECT_EQ(stages[0].pool, 0U);
  EXPECT_EQ(stages[1].pool, 1U);
  EXPECT_EQ(stages[1].step, CascadeStep::kFallback);
  EXPECT_FALSE(stages[1].may_wait);
  EXPECT_DOUBLE_EQ(stages[1].slo_fraction, 0.5);
  EXPECT_EQ(stages[2].pool, 0U);
  EXPECT_EQ(stages[2].clamp_max_tokens, 64);
  EXPECT_EQ(stages[3].pool, 1U);
  EXPECT_EQ(stages[3].clamp_max_tokens, 32);
  EXPECT_TRUE(stages[3].may_wait);
}

TEST(CascadePlanTest, OptingOutSkipsTheFallbacksAndAnOrderWithoutAStepSkipsIt) {
  const std::vector<DegradeConfig> chain = {DegradeConfig{64, 0.5}, DegradeConfig{}};
  std::vector<CascadeStage> stages =
      PlanCascade(Order({"primary", "clamp", "fallback"}), chain, /*cascade=*/false);
  ASSERT_EQ(stages.size(), 2U);
  EXPECT_EQ(stages[1].step, CascadeStep::kClamp);
  stages = PlanCascade(Order({"primary", "fallback"}), chain, /*cascade=*/true);
  ASSERT_EQ(stages.size(), 2U);
  EXPECT_EQ(stages[0].slo_fraction, 1) << "no clamp step: the primary takes the whole budget";
  EXPECT_EQ(stages[1].step, CascadeStep::kFallback);
  stages = PlanCascade(Order({"primary", "reject"}), chain, /*cascade=*/true);
  ASSERT_EQ(stages.size(), 1U);
}

TEST(CascadePlanTest, TheCacheIsAStageOfItsOwnThatChangesNoPoolsStages) {
  const std::vector<CascadeStage> stages = PlanCascade(
      DefaultCascadeOrder(), {DegradeConfig{64, 0.4}, DegradeConfig{}}, /*cascade=*/true);
  ASSERT_EQ(stages.size(), 4U);
  EXPECT_EQ(stages[0].step, CascadeStep::kCache);
  EXPECT_EQ(stages[1].step, CascadeStep::kPrimary);
  EXPECT_DOUBLE_EQ(stages[1].slo_fraction, 0.4);
  const std::vector<CascadeStage> last =
      PlanCascade(Order({"primary", "cache"}), {DegradeConfig{}}, /*cascade=*/true);
  ASSERT_EQ(last.size(), 2U);
  EXPECT_TRUE(last[0].may_wait) << "a cache stage after it is no stage of its pool";
  EXPECT_EQ(last[0].slo_fraction, 1);
}

TEST(CascadePlanTest, AClampLowersOnlyWhatAsksForMoreOrForNothing) {
  EXPECT_EQ(ClampedMaxTokens(256, 64), std::optional<std::int32_t>(64));
  EXPECT_EQ(ClampedMaxTokens(std::nullopt, 64), std::optional<std::int32_t>(64));
  EXPECT_FALSE(ClampedMaxTokens(64, 64).has_value());
  EXPECT_FALSE(ClampedMaxTokens(16, 64).has_value());
  EXPECT_FALSE(ClampedMaxTokens(256, 0).has_value()) << "no clamp";
}

}  // namespace
}  // namespace spillway::routing
