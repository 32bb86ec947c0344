// Request bookkeeping (request.h): token counts, prefill/decode phase, reason and state names.

#include "sched/request.h"

#include <cstdint>
#include <string_view>

#include <gtest/gtest.h>

namespace spillway {
namespace {

Request Make(std::int32_t prompt, std::int32_t outputs, std::int64_t computed) {
  Request r;
  r.spec.prompt_tokens = prompt;
  r.spec.max_output_tokens = 100;
  r.num_output_tokens = outputs;
  r.num_computed_tokens = computed;
  return r;
}

TEST(RequestTest, DefaultsAreWaitingUnscheduledWithNoDeadline) {
  const Request r;
  EXPECT_EQ(r.state, RequestState::kWaiting);
  EXPECT_EQ(r.finish_reason, FinishReason::kNone);
  EXPECT_EQ(r.pending_finish, FinishReason::kNone);
  EXPECT_EQ(r.spec.deadline_s, kNever);
  EXPECT_FALSE(r.ever_scheduled());
  EXPECT_EQ(r.first_token_s, kNever);
  EXPECT_EQ(r.finished_s, kNever);
}

TEST(RequestTest, NumTokensIsPromptPlusSampledOutputs) {
  EXPECT_EQ(Make(10, 0, 0).num_tokens(), 10);
  EXPECT_EQ(Make(10, 3, 12).num_tokens(), 13);
}

TEST(RequestTest, InPrefillUntilThePromptIsComputedAndATokenSampled) {
  EXPECT_TRUE(Make(10, 0, 0).in_prefill());    // nothing computed
  EXPECT_TRUE(Make(10, 0, 5).in_prefill());    // a chunk done
  EXPECT_TRUE(Make(10, 0, 10).in_prefill());   // prompt computed, no token yet
  EXPECT_FALSE(Make(10, 1, 10).in_prefill());  // decoding: one pending token
  EXPECT_FALSE(Make(10, 5, 14).in_prefill());
  EXPECT_TRUE(Make(10, 5, 0).in_prefill());  // preempted: recompute prompt + outputs
  EXPECT_TRUE(Make(10, 5, 8).in_prefill());  // part-way through the recompute
}

TEST(RequestTest, EverScheduledFollowsFirstScheduledTime) {
  Request r;
  r.first_scheduled_s = 0.0;
  EXPECT_TRUE(r.ever_scheduled());
}

TEST(RequestTest, FinishReasonNamesAreStableLowerCaseTokens) {
  EXPECT_EQ(ToString(FinishReason::kNone), "none");
  EXPECT_EQ(ToString(FinishReason::kStop), "stop");
  EXPECT_EQ(ToString(FinishReason::kLength), "length");
  EXPECT_EQ(ToString(FinishReason::kAbort), "abort");
  EXPECT_EQ(ToString(FinishReason::kDeadline), "deadline");
  EXPECT_EQ(ToString(FinishReason::kRejected), "rejected");
  EXPECT_EQ(ToString(FinishReason::kPreemptionLimit), "preemption_limit");
}

TEST(RequestTest, StateNamesAreStableLowerCaseTokens) {
  EXPECT_EQ(ToString(RequestState::kWaiting), "waiting");
  EXPECT_EQ(ToString(RequestState::kRunning), "running");
  EXPECT_EQ(ToString(RequestState::kPreempted), "preempted");
  EXPECT_EQ(ToString(RequestState::kFinished), "finished");
}

}  // namespace
}  // namespace spillway
