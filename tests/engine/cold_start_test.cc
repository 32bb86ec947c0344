// Issue 12, finding 5: a fresh engine (no step measured yet) must not shed a burst it can serve.
// Until the engine measures itself, admission reads the cost model's prefill throughput at the
// decodes a request will share its steps with (admission/priors.h PrefillRates), not a full
// SLO-derived batch's. The live test is tests/server/live_scheduler_mix_test.cc
// (LiveColdStartTest).

#include <gtest/gtest.h>

#include "engine_driver.h"

namespace spillway {
namespace {

using enginetest::EngineDriver;

struct BurstResult {
  int admitted = 0;
  int within_slo = 0;     ///< first token within the 1 s TTFT SLO
  int admitted_late = 0;  ///< admitted, then first token after the SLO or dropped at the head
};

// `n` requests of `prompt` tokens and 16 output tokens at once on a fresh engine.
BurstResult Burst(const std::string& profile, const std::string& policy, int n, int prompt) {
  config::EngineSettings s;
  s.profile = profile;
  s.policy = policy;
  EngineDriver d(enginetest::Resolve(s));
  for (int i = 0; i < n; ++i) {
    d.Offer(prompt, 16);
  }
  d.RunToIdle(60);
  BurstResult r;
  for (const auto& [id, o] : d.outcomes()) {
    if (!o.decision.admitted()) {
      continue;
    }
    ++r.admitted;
    const bool in_time = o.ttft_s() <= 1.0;
    r.within_slo += in_time;
    r.admitted_late += !in_time;
  }
  return r;
}

// The finding: 120 requests of 200 prompt tokens on a fresh h100-llama3-8b engine, which served
// all of them within the SLO when it admitted them all. Before: 10 admitted (the prior was a full
// batch of 520 sequences: 2,064 prompt tokens/s, the idle engine does about 27,600). With the
// profile fitted to public runs (3.2 ms of first-token work a prompt), the engine serves 100 of
// them within the SLO, not 120: the burst is 100.
constexpr int kBurst = 100;

TEST(ColdStartTest, AFreshEngineAdmitsABurstItServesWithinTheTtftSlo) {
  const BurstResult all = Burst("h100-llama3-8b", "unbounded", kBurst, 200);
  ASSERT_EQ(all.within_slo, kBurst);
  const BurstResult r = Burst("h100-llama3-8b", "predictive", kBurst, 200);
  RecordProperty("admitted", r.admitted);
  EXPECT_GE(r.admitted, 85);  // 88 measured (each waiting prompt's overhead counted)
  EXPECT_EQ(r.admitted_late, 0);
}

// Every shipped profile, prompts from 16 to 512 tokens: a fresh engine serves within the SLO at
// least 80% of what it would serve so admitting everything (the least: h100-llama3-8b-vllm0.5.4
// with 512-token prompts, 46 of 55, its 3.1 ms of overheads a prompt counted for each prompt
// waiting ahead; then seed-a100-7b with 16-token prompts, 72 of 81), and at most 5% of what it
// admits misses it.
TEST(ColdStartTest, EveryProfileAdmitsWhatItServesWithinTheSlo) {
  for (const char* profile :
       {"a100-llama2-7b", "a100-llama3-8b", "a100-llama3.2-1b", "h100-llama2-7b", "h100-llama3-8b",
        "h100-llama3.2-1b", "h100-llama3-8b-vllm0.5.4", "seed-a100-7b"}) {
    for (int prompt : {16, 64, 200, 512}) {
      const BurstResult servable = Burst(profile, "unbounded", 120, prompt);
      const BurstResult r = Burst(profile, "predictive", 120, prompt);
      EXPECT_GE(r.within_slo, 0.8 * servable.within_slo) << profile << ", prompt " << prompt;
      EXPECT_LE(r.admitted_late, 0.05 * r.admitted) << profile << ", prompt " << prompt;
    }
  }
}

}  // namespace
}  // namespace spillway
