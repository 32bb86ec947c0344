// Issue 12, finding 1 (vLLM #25538): a long prompt in a KV pool that cannot hold it beside the
// running decodes no longer starts on one chunk's free blocks, runs out mid-prefill and is
// preempted again and again. A prompt of several steps is admitted only when its whole prefill
// and the running decodes' growth meanwhile fit beside what the running prefills still need
// (SchedulerConfig::reserve_prefill_blocks); requests behind it pass it only when they do not
// delay its start (prefill_backfill_test.cc). The live test is
// tests/server/live_scheduler_mix_test.cc (LiveRecomputeThrashTest).

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "engine_driver.h"

namespace spillway {
namespace {

using enginetest::EngineDriver;

struct ThrashRun {
  Seconds decodes_done_s = 0;
  enginetest::Outcome long_prompt;
  std::int64_t prefill_tokens = 0;
};

// Eight decodes (500 prompt, 1,200 output tokens), and a 16k-token prompt 0.2 s later.
ThrashRun RunMix(const EngineConfig& c, bool with_long_prompt) {
  EngineDriver d(c);
  std::vector<RequestId> decodes;
  for (int i = 0; i < 8; ++i) {
    decodes.push_back(d.Offer(500, 1200));
  }
  d.RunUntil(0.2);
  const RequestId long_prompt = with_long_prompt ? d.Offer(16000, 16) : 0;
  d.RunToIdle(300);
  ThrashRun r;
  for (RequestId id : decodes) {
    r.decodes_done_s = std::max(r.decodes_done_s, d.outcome(id).finished_s);
  }
  if (with_long_prompt) {
    r.long_prompt = d.outcome(long_prompt);
  }
  r.prefill_tokens = d.prefill_tokens();
  return r;
}

// Before: the long prompt was preempted 205 times, 1.88M of 1.90M prefill tokens were
// recomputed, and the decodes finished at 70.9 s instead of 11.5 s.
TEST(RecomputeThrashTest, ALongPromptWaitsForRoomInsteadOfThrashing) {
  const EngineConfig c = enginetest::Resolve(enginetest::TightKvPool("unbounded"));
  const ThrashRun alone = RunMix(c, false);
  const ThrashRun r = RunMix(c, true);
  EXPECT_EQ(r.long_prompt.finish_reason, FinishReason::kLength);
  EXPECT_EQ(r.long_prompt.num_preemptions, 0);
  EXPECT_EQ(r.long_prompt.recomputed_tokens, 0);
  EXPECT_EQ(r.prefill_tokens, 8 * 500 + 16000);
  RecordProperty("decodes_done_s", std::to_string(r.decodes_done_s));
  EXPECT_LT(r.decodes_done_s, 1.05 * alone.decodes_done_s);  // 11.53 s against 11.53 s
}

// The reservation off: the finding, kept as the baseline.
TEST(RecomputeThrashTest, WithoutTheReservationTheLongPromptThrashes) {
  EngineConfig c = enginetest::Resolve(enginetest::TightKvPool("unbounded"));
  c.scheduler.reserve_prefill_blocks = false;
  EXPECT_GT(RunMix(c, true).long_prompt.num_preemptions, 20);  // 205
}

// A steady flow of short requests that fit cannot hold a waiting long prompt off for ever: they
// pass it only when they finish before the blocks it needs free up. Measured: it starts at
// 12.8 s, the decodes it cannot fit beside done at 11.5 s (12.1 s when every request behind it
// waited after 128 steps); with no bound on passing it, it started when the flow stopped (51 s).
TEST(RecomputeThrashTest, RequestsThatFitPassAWaitingLongPromptOnlyForABoundedTime) {
  EngineDriver d(enginetest::Resolve(enginetest::TightKvPool("unbounded")));
  for (int i = 0; i < 8; ++i) {
    d.Offer(500, 1200);
  }
  d.RunUntil(0.2);
  const RequestId long_prompt = d.Offer(16000, 16);
  std::vector<RequestId> shorts;
  for (int k = 0; k < 1000; ++k) {  // 50 s at 20 req/s
    d.RunUntil(0.2 + 0.05 * k);
    shorts.push_back(d.Offer(200, 100));
  }
  d.RunToIdle(300);
  const enginetest::Outcome& o = d.outcome(long_prompt);
  EXPECT_EQ(o.finish_reason, FinishReason::kLength);
  EXPECT_EQ(o.num_preemptions, 0);
  RecordProperty("long_prompt_ttft_s", std::to_string(o.ttft_s()));
  EXPECT_LT(o.ttft_s(), 16);
}

// Predictive admission sees that a long prompt has no KV room beside steady short traffic: it
// refuses it at the door (429 kv_saturation, Retry-After from the blocks' release rate)
// instead of admitting it to wait for room past its queue-ingress deadline. Found by a trial:
// a 16k-token prompt retried after each Retry-After was admitted and dropped at the queue head
// 13 times of 13 (Retry-After 1 s each time).
TEST(RecomputeThrashTest, PredictiveRefusesAtTheDoorAPromptWithNoKvRoom) {
  config::EngineSettings s = enginetest::TightKvPool("unbounded");
  s.policy = "predictive";
  s.request_timeout_s = 30;
  EngineDriver d(enginetest::Resolve(s));
  std::vector<RequestId> longs;
  for (int k = 0; k < 300; ++k) {  // 30 s of 500/200-token requests at 10 req/s
    d.RunUntil(0.1 * k);
    d.Offer(500, 200);
    if (k >= 50 && k % 20 == 0) {
      longs.push_back(d.Offer(16000, 16));
    }
  }
  d.RunToIdle(120);
  for (RequestId id : longs) {
    const enginetest::Outcome& o = d.outcome(id);
    if (o.decision.admitted()) {
      EXPECT_NE(o.finish_reason, FinishReason::kDeadline) << "admitted, then dropped at the head";
    } else {
      EXPECT_EQ(o.decision.reason, OverloadReason::kKvSaturation);
      EXPECT_GE(o.decision.retry_after_s, 1);
    }
  }
}

}  // namespace
}  // namespace spillway
