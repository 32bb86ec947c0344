// Issue 12, finding 6: the prefill throughput admission assumes is measured from capacity, and
// an estimate taken under load never turns into a permanent 400. A rate measured beside a full
// batch is carried to the batch a request will really share its steps with (the cost model's
// shape, scaled to the measurement). The live test is tests/server/live_scheduler_mix_test.cc
// (LiveLongPromptAfterLoadTest).

#include <gtest/gtest.h>

#include "engine_driver.h"

namespace spillway {
namespace {

using enginetest::EngineDriver;

// Ten seconds of short requests well above capacity: the engine measures its prefill rate beside
// a batch of about 440 decodes (about 6,450 tokens/s on h100-llama3-8b).
void LoadThenIdle(EngineDriver* d) {
  for (int i = 0; i < 400; ++i) {
    d->RunUntil(i * 0.025);
    for (int k = 0; k < 4; ++k) {
      d->Offer(64, 256);
    }
  }
  d->RunToIdle(120);
}

// Then four decode streams and a 128k-token prompt. The engine prefills it in about 9 s; read at
// the full batch's rate it needed 19.8 s, and with a 20 s request deadline it was refused with
// 400 max_tokens_exceeds_deadline ("at most 0 fit"): no retry helps, for a servable request.
TEST(PrefillCapacityTest, ALongPromptAfterLoadIsServedNotRefusedForGood) {
  config::EngineSettings s;
  s.profile = "h100-llama3-8b";
  s.max_model_len = 131072;
  s.request_timeout_s = 20;
  EngineDriver d(enginetest::Resolve(s));
  LoadThenIdle(&d);
  ASSERT_TRUE(d.engine().admission().estimator().prefill_capacity_measured());
  for (int i = 0; i < 4; ++i) {
    d.Offer(8, 2000);
  }
  d.RunUntil(d.now() + 2);
  const RequestId long_prompt = d.Offer(128000, 16);
  const enginetest::Outcome& o = d.outcome(long_prompt);
  ASSERT_TRUE(o.decision.admitted()) << ToString(o.decision.reason);
  d.RunToIdle(d.now() + 60);
  EXPECT_EQ(o.finish_reason, FinishReason::kLength);
  RecordProperty("ttft_s", std::to_string(o.ttft_s()));
  EXPECT_LT(o.finished_s - o.offered_s, 20);  // about 9 s
}

}  // namespace
}  // namespace spillway
