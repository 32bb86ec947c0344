// Issue 12, from a new user's trial of finding 1's fix: a prompt of several steps waiting for
// KV room (SchedulerConfig::reserve_prefill_blocks) held every request behind it once its
// max_prefill_bypass_steps were spent, so short requests waited for the running decodes to
// finish beside a pool mostly free. Now only those that would delay its start wait (EASY
// backfilling): a request passes it when it finishes, by its max_tokens, before the running
// requests' finishes free the blocks the prompt needs, or when it fits in the blocks left over
// then. The pool and mix are those of recompute_thrash_test.cc; the live test is
// tests/server/live_scheduler_mix_test.cc (LivePrefillBackfillTest).

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine_driver.h"

namespace spillway {
namespace {

using enginetest::EngineDriver;

struct BackfillRun {
  enginetest::Outcome long_prompt;
  std::vector<double> ttft_s;  // of the admitted requests behind it, sorted
};

// Eight decodes (500 prompt, 1,200 output tokens), a 16k-token prompt that cannot fit beside
// them 0.2 s later, then `count` requests of `prompt`/`max_tokens` tokens every `gap_s`.
BackfillRun RunBehind(const char* policy, int count, Seconds gap_s, std::int32_t prompt,
                      std::int32_t max_tokens) {
  EngineDriver d(enginetest::Resolve(enginetest::TightKvPool(policy)));
  for (int i = 0; i < 8; ++i) {
    d.Offer(500, 1200);
  }
  d.RunUntil(0.2);
  const RequestId long_prompt = d.Offer(16000, 16);
  std::vector<RequestId> behind;
  for (int k = 0; k < count; ++k) {
    d.RunUntil(0.2 + gap_s * k);
    behind.push_back(d.Offer(prompt, max_tokens));
  }
  d.RunToIdle(600);
  BackfillRun r;
  r.long_prompt = d.outcome(long_prompt);
  for (RequestId id : behind) {
    if (d.outcome(id).decision.admitted()) {
      r.ttft_s.push_back(d.outcome(id).ttft_s());
    }
  }
  std::sort(r.ttft_s.begin(), r.ttft_s.end());
  return r;
}

// Before: the short requests' TTFT p99 was 10.2 s, max 10.4 s (all of them waited from the
// 128th blocked step until the decodes finished, 12.1 s). Measured now: p99 0.87 s, max 1.03 s;
// the long prompt starts at 12.8 s (0.7 s later: the shorts admitted just before its start hold
// blocks its prefill's growth estimate counts).
TEST(PrefillBackfillTest, ShortRequestsPassABlockedLongPromptThatTheyDoNotDelay) {
  for (const char* policy : {"unbounded", "tail-drop"}) {
    SCOPED_TRACE(policy);
    const BackfillRun r = RunBehind(policy, 400, 0.05, 200, 100);  // 20 s at 20 req/s
    ASSERT_EQ(r.ttft_s.size(), 400u);
    RecordProperty(std::string(policy) + "_short_ttft_max_s", std::to_string(r.ttft_s.back()));
    EXPECT_LT(r.ttft_s.back(), 2.0);
    EXPECT_EQ(r.long_prompt.finish_reason, FinishReason::kLength);
    EXPECT_EQ(r.long_prompt.num_preemptions, 0);
    RecordProperty(std::string(policy) + "_long_prompt_ttft_s",
                   std::to_string(r.long_prompt.ttft_s()));
    EXPECT_LT(r.long_prompt.ttft_s(), 14);
  }
}

// Requests that would still run when the decodes finish, and do not fit in what the long
// prompt leaves free then, do not pass it: it starts as it would with nothing behind it.
// Measured: 12.0 s against 11.9 s alone; 29.8 s when any request that fit passed it for 128
// steps.
TEST(PrefillBackfillTest, LongOutputsThatWouldDelayItWaitBehindIt) {
  const BackfillRun alone = RunBehind("unbounded", 0, 0.05, 200, 3000);
  const BackfillRun r = RunBehind("unbounded", 100, 0.05, 200, 3000);  // 5 s at 20 req/s
  RecordProperty("alone_ttft_s", std::to_string(alone.long_prompt.ttft_s()));
  RecordProperty("with_long_outputs_ttft_s", std::to_string(r.long_prompt.ttft_s()));
  EXPECT_EQ(r.long_prompt.num_preemptions, 0);
  EXPECT_LT(r.long_prompt.ttft_s(), alone.long_prompt.ttft_s() + 1.0);
}

}  // namespace
}  // namespace spillway
