// Admission's verdicts and the overload contract's statuses agree for every reason: a shed is a
// 429 the client may retry, a hard limit a 503, a request that never fits a 400 no retry helps.

#include <gtest/gtest.h>

#include "admission/admission.h"
#include "api/overload_contract.h"
#include "engine/contract_status.h"

namespace spillway {
namespace {

TEST(ContractStatusTest, EveryReasonsVerdictMatchesItsContractRow) {
  constexpr auto kLast = static_cast<int>(OverloadReason::kKvCapacityExceeded);
  for (int r = 1; r <= kLast; ++r) {
    const auto reason = static_cast<OverloadReason>(r);
    SCOPED_TRACE(ToString(reason));
    const api::ContractRow* row = api::FindContractRow(ToString(reason));
    ASSERT_NE(row, nullptr) << "every reason admission gives is a row of the contract";
    EXPECT_EQ(ContractStatus(reason), row->http_status);
    switch (RefusalVerdict(reason)) {
      case Verdict::kShed:
        EXPECT_EQ(row->http_status, 429);
        EXPECT_TRUE(row->retryable);
        break;
      case Verdict::kHardLimit:
        EXPECT_EQ(row->http_status, 503);
        EXPECT_TRUE(row->retryable);
        break;
      case Verdict::kNeverFits:
        EXPECT_EQ(row->http_status, 400);
        EXPECT_FALSE(row->retryable);
        break;
      default:
        ADD_FAILURE() << "a reason is a refusal";
    }
  }
  EXPECT_EQ(RefusalVerdict(OverloadReason::kNone), Verdict::kAdmit);
}

TEST(ContractStatusTest, AnAdmittedDecisionIs200AndARefusalTakesItsReasonsStatus) {
  AdmissionDecision d;
  EXPECT_EQ(HttpStatus(d), 200);
  d.verdict = Verdict::kDegrade;
  EXPECT_EQ(HttpStatus(d), 200);
  d = AdmissionController::Refusal(OverloadReason::kQueueFull, 3);
  EXPECT_EQ(d.verdict, Verdict::kHardLimit);
  EXPECT_EQ(HttpStatus(d), 503);
  d = AdmissionController::Refusal(OverloadReason::kContextLengthExceeded, 1);
  EXPECT_EQ(d.verdict, Verdict::kNeverFits);
  EXPECT_FALSE(d.admitted());
  EXPECT_EQ(HttpStatus(d), 400);
}

}  // namespace
}  // namespace spillway
