// The emulated model's EOS: a request with a hidden output length stops there with finish
// reason stop; ignore_eos runs it to max_tokens; admission learns from what finished, never
// from the hidden length (issue 14, "Realistic traffic for the predictor").

#include <gtest/gtest.h>

#include <vector>

#include "engine/engine_driver.h"

namespace spillway {
namespace {

using enginetest::EngineDriver;

EngineRequest Capped(std::int32_t max_tokens, std::int32_t hidden, bool ignore_eos = false) {
  return enginetest::Ask(32, max_tokens, ignore_eos, hidden);
}

TEST(EmulatedEosTest, ARequestStopsAtItsHiddenLengthWithFinishReasonStop) {
  EngineDriver driver(enginetest::Resolve(enginetest::Seed("predictive")));
  const RequestId eos = driver.Offer(Capped(256, 40));
  const RequestId capped = driver.Offer(Capped(64, 400));  // the cap comes first
  const RequestId none = driver.Offer(Capped(50, 0));      // no hidden length: runs to its cap
  driver.RunToIdle(30);
  ASSERT_TRUE(driver.outcome(eos).decision.admitted())
      << ToString(driver.outcome(eos).decision.reason);
  EXPECT_EQ(driver.outcome(eos).finish_reason, FinishReason::kStop);
  EXPECT_EQ(driver.outcome(eos).output_tokens, 40);
  EXPECT_EQ(driver.outcome(capped).finish_reason, FinishReason::kLength);
  EXPECT_EQ(driver.outcome(capped).output_tokens, 64);
  EXPECT_EQ(driver.outcome(none).finish_reason, FinishReason::kLength);
  EXPECT_EQ(driver.outcome(none).output_tokens, 50);
}

TEST(EmulatedEosTest, IgnoreEosRunsToMaxTokens) {
  EngineDriver driver(enginetest::Resolve(enginetest::Seed("predictive")));
  const RequestId id = driver.Offer(Capped(100, 10, /*ignore_eos=*/true));
  driver.RunToIdle(30);
  EXPECT_EQ(driver.outcome(id).finish_reason, FinishReason::kLength);
  EXPECT_EQ(driver.outcome(id).output_tokens, 100);
}

TEST(EmulatedEosTest, AdmissionLearnsTheLengthsThatFinishedNotTheHiddenOnes) {
  EngineDriver driver(enginetest::Resolve(enginetest::Seed("predictive")));
  const AdmissionController& admission = driver.engine().admission();
  for (int i = 0; i < 20; ++i) {
    driver.Offer(Capped(256, 64));
  }
  // Admitted, not yet finished: admission still expects the cap.
  EXPECT_DOUBLE_EQ(admission.ExpectedOutput({"default", 32, 256}), 256);
  driver.RunToIdle(60);
  EXPECT_EQ(admission.output_lengths().samples(), 20);
  EXPECT_DOUBLE_EQ(admission.ExpectedOutput({"default", 32, 256}), 64);
}

TEST(EmulatedEosTest, ACapLongerThanTheDeadlineAllowsIsServedWhileTheModelStopsEarlier) {
  // seed-a100-7b decodes at about 16 ms a step alone: 1,000 tokens take 16 s, past the 4.5 s
  // request deadline. Under ignore_eos that is certain (400); without, the model is seen to
  // stop near 100 tokens, and the request is admitted and served.
  EngineDriver driver(enginetest::Resolve(enginetest::Seed("predictive")));
  EXPECT_EQ(driver.outcome(driver.Offer(Capped(1000, 100, /*ignore_eos=*/true))).decision.reason,
            OverloadReason::kMaxTokensExceedsDeadline);
  for (int i = 0; i < 20; ++i) {
    driver.Offer(Capped(200, 100));
  }
  driver.RunToIdle(60);
  const RequestId later = driver.Offer(Capped(1000, 100));
  EXPECT_TRUE(driver.outcome(later).decision.admitted());
  driver.RunToIdle(120);
  EXPECT_EQ(driver.outcome(later).finish_reason, FinishReason::kStop);
}

TEST(EmulatedEosTest, ARequestStillGeneratingAtTheDeadlineTeachesThatItsCapRunsLong) {
  EngineDriver driver(enginetest::Resolve(enginetest::Seed("predictive")));
  std::vector<RequestId> ids;
  for (int i = 0; i < 16; ++i) {
    ids.push_back(driver.Offer(Capped(1000, 0)));  // no EOS: runs to its cap
  }
  driver.RunUntil(4.5);
  for (const RequestId id : ids) {
    driver.engine().AbortAtDeadline(id);
  }
  driver.RunUntil(5);
  const AdmissionController& admission = driver.engine().admission();
  EXPECT_EQ(admission.output_lengths().samples(), 16);
  EXPECT_DOUBLE_EQ(admission.ExpectedOutput({"default", 32, 1000}), 1000);
  // Now a 400, as under ignore_eos: requests like it run past what an idle engine can do.
  EXPECT_EQ(driver.outcome(driver.Offer(Capped(1000, 0))).decision.reason,
            OverloadReason::kMaxTokensExceedsDeadline);
}

}  // namespace
}  // namespace spillway
