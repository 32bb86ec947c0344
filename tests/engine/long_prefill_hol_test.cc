// Issue 12, finding 2 (SGLang #22831, vLLM #21495): with the defaults, long prompts at the head
// of the queue no longer take every step's token budget. The default long-prefill threshold is
// derived (engine/resolve.h kLongPrefillSloFraction): a prompt an idle engine takes over a tenth
// of the TTFT SLO to prefill is long, one long prompt prefills at a time, and while others wait
// it takes at most half of each step. The live test is tests/server/live_scheduler_mix_test.cc
// (LiveLongPrefillHolTest).

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "engine_driver.h"

namespace spillway {
namespace {

using enginetest::EngineDriver;

config::EngineSettings LongContext(const char* policy) {
  config::EngineSettings s;
  s.profile = "h100-llama3-8b";
  s.max_model_len = 32768;
  s.policy = policy;
  return s;
}

// p99 TTFT of 200-token requests at 40 req/s for 15 s, with an 11k-token prompt every 0.4 s
// beside them (`longs`) or not.
double ShortP99(const config::EngineSettings& s, bool longs) {
  EngineDriver d(enginetest::Resolve(s));
  std::vector<RequestId> shorts;
  for (int k = 0; k < 600; ++k) {
    d.RunUntil(k * 0.025);
    shorts.push_back(d.Offer(200, 64));
    if (longs && k % 16 == 0) {
      d.Offer(11000, 16);
    }
  }
  d.RunToIdle(120);
  std::vector<double> ttft;
  for (RequestId id : shorts) {
    const enginetest::Outcome& o = d.outcome(id);
    ttft.push_back(o.first_token_s == kNever ? kNever : o.ttft_s());
  }
  std::sort(ttft.begin(), ttft.end());
  return ttft[ttft.size() * 99 / 100];
}

// Measured: 0.010 s without the long prompts, 0.022 s with them; before, 7.69 s (unbounded) and
// 0.93 s (predictive, which then refused the short requests' share of the late ones).
TEST(LongPrefillHolTest, ShortPromptsKeepTheirTtftBesideLongOnesByDefault) {
  for (const char* policy : {"unbounded", "predictive"}) {
    const double base = ShortP99(LongContext(policy), false);
    const double mixed = ShortP99(LongContext(policy), true);
    RecordProperty(std::string(policy) + "_short_p99_s", std::to_string(mixed));
    EXPECT_LT(mixed, 5 * base + 0.05) << policy << ": " << mixed << " s against " << base;
  }
}

// The threshold set to 0 turns the cap off: the finding, kept as the baseline.
TEST(LongPrefillHolTest, WithoutTheCapShortPromptsQueueBehindLongOnes) {
  config::EngineSettings s = LongContext("unbounded");
  s.long_prefill_token_threshold = 0;
  EXPECT_GT(ShortP99(s, true), 2.0);
}

// A prompt that fits one step is never long, whatever the SLO: the derived threshold stays at
// least the token budget (a threshold below the short prompts' length made them wait 15x).
TEST(LongPrefillHolTest, TheDerivedThresholdIsAtLeastTheTokenBudget) {
  config::EngineSettings s = LongContext("predictive");
  s.ttft_slo_s = 0.001;
  const EngineConfig c = enginetest::Resolve(s);
  EXPECT_EQ(c.scheduler.long_prefill_token_threshold, c.scheduler.max_num_batched_tokens);
  EXPECT_EQ(c.scheduler.long_prefill_max_chunk_tokens, c.scheduler.max_num_batched_tokens / 2);
}

}  // namespace
}  // namespace spillway
