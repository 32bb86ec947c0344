// Stable names (admission.h): policy names for config files and the overload reason tokens
// used in X-Overload-Reason headers and metric labels.

#include <string_view>

#include <gtest/gtest.h>

#include "admission/admission.h"

namespace spillway {
namespace {

TEST(AdmissionNamesTest, ParsesEveryPolicyName) {
  AdmissionPolicy p = AdmissionPolicy::kPredictive;
  ASSERT_TRUE(ParseAdmissionPolicy("unbounded", &p));
  EXPECT_EQ(p, AdmissionPolicy::kUnbounded);
  ASSERT_TRUE(ParseAdmissionPolicy("tail-drop", &p));
  EXPECT_EQ(p, AdmissionPolicy::kTailDrop);
  ASSERT_TRUE(ParseAdmissionPolicy("predictive", &p));
  EXPECT_EQ(p, AdmissionPolicy::kPredictive);
  ASSERT_TRUE(ParseAdmissionPolicy("forecast", &p));
  EXPECT_EQ(p, AdmissionPolicy::kForecast);
}

TEST(AdmissionNamesTest, PolicyNamesRoundTrip) {
  for (const AdmissionPolicy policy : {AdmissionPolicy::kUnbounded, AdmissionPolicy::kTailDrop,
                                       AdmissionPolicy::kPredictive, AdmissionPolicy::kForecast}) {
    AdmissionPolicy parsed = policy == AdmissionPolicy::kUnbounded ? AdmissionPolicy::kPredictive
                                                                   : AdmissionPolicy::kUnbounded;
    ASSERT_TRUE(ParseAdmissionPolicy(ToString(policy), &parsed)) << ToString(policy);
    EXPECT_EQ(parsed, policy);
  }
}

TEST(AdmissionNamesTest, ThePolicyNamesListIsTheEnumInOrder) {
  for (std::size_t i = 0; i < kAdmissionPolicyNames.size(); ++i) {
    AdmissionPolicy p{};
    ASSERT_TRUE(ParseAdmissionPolicy(kAdmissionPolicyNames[i], &p));
    EXPECT_EQ(static_cast<std::size_t>(p), i);
  }
}

TEST(AdmissionNamesTest, RejectsUnknownPolicyNamesWithoutTouchingTheOutput) {
  for (const std::string_view bad :
       {"", "Predictive", "tail_drop", "taildrop", "unbounded ", " predictive", "fifo"}) {
    AdmissionPolicy p = AdmissionPolicy::kTailDrop;
    EXPECT_FALSE(ParseAdmissionPolicy(bad, &p)) << "'" << bad << "'";
    EXPECT_EQ(p, AdmissionPolicy::kTailDrop);
  }
}

TEST(AdmissionNamesTest, OverloadReasonTokensAreExact) {
  EXPECT_EQ(ToString(OverloadReason::kNone), "none");
  EXPECT_EQ(ToString(OverloadReason::kRateLimited), "rate_limited");
  EXPECT_EQ(ToString(OverloadReason::kQueueDelayExceeded), "queue_delay_exceeded");
  EXPECT_EQ(ToString(OverloadReason::kKvSaturation), "kv_saturation");
  EXPECT_EQ(ToString(OverloadReason::kQueueDelayAndKvSaturation), "queue_delay_and_kv_saturation");
  EXPECT_EQ(ToString(OverloadReason::kQueueFull), "queue_full");
  EXPECT_EQ(ToString(OverloadReason::kQueuedTokensFull), "queued_tokens_full");
  EXPECT_EQ(ToString(OverloadReason::kDraining), "draining");
  EXPECT_EQ(ToString(OverloadReason::kQueueDeadlineExceeded), "queue_deadline_exceeded");
}

// "admit" and "degrade" are values of the decision label of spillway_admission_decisions_total.
TEST(AdmissionNamesTest, VerdictNamesAreExact) {
  EXPECT_EQ(ToString(Verdict::kAdmit), "admit");
  EXPECT_EQ(ToString(Verdict::kDegrade), "degrade");
  EXPECT_EQ(ToString(Verdict::kShed), "shed");
  EXPECT_EQ(ToString(Verdict::kHardLimit), "hard_limit");
  EXPECT_EQ(ToString(Verdict::kNeverFits), "never_fits");
}

}  // namespace
}  // namespace spillway

namespace spillway {
namespace {

// A refusal carries its reason's verdict and a Retry-After of whole seconds, at least 1 (the
// contract's status for each reason: tests/engine/contract_status_test.cc).
TEST(AdmissionRefusalTest, EveryReasonRefusesWithItsVerdictAndAtLeastOneSecond) {
  for (int r = static_cast<int>(OverloadReason::kRateLimited);
       r <= static_cast<int>(OverloadReason::kKvCapacityExceeded); ++r) {
    const auto reason = static_cast<OverloadReason>(r);
    const AdmissionDecision d = AdmissionController::Refusal(reason, 0.2);
    EXPECT_FALSE(d.admitted()) << ToString(reason);
    EXPECT_EQ(d.verdict, RefusalVerdict(reason)) << ToString(reason);
    EXPECT_EQ(d.retry_after_s, 1.0) << ToString(reason);
  }
}

}  // namespace
}  // namespace spillway
