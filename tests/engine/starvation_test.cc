// Issue 12, finding 4 (vLLM #41951): under priority scheduling and a steady load of a more
// urgent class above capacity, a less urgent request must not sit in the queue until the
// request deadline answers 504. The live test is tests/server/live_scheduler_mix_test.cc
// (LiveStarvationTest).

#include <gtest/gtest.h>

#include "engine_driver.h"

namespace spillway {
namespace {

using enginetest::EngineDriver;

config::EngineSettings ByPriority() {
  config::EngineSettings s;
  s.scheduling = "priority";
  return s;
}

/// Class-0 requests (64 prompt, 64 output tokens) at `rate_rps` from 0 to `until_s`, and one
/// request of `priority` offered at `at_s`; its id.
RequestId SteadyLoadAndOne(EngineDriver& d, double rate_rps, Seconds until_s, Seconds at_s,
                           std::int32_t priority) {
  RequestId one = 0;
  for (int k = 0; k * (1.0 / rate_rps) < until_s; ++k) {
    const Seconds t = k / rate_rps;
    d.RunUntil(t);
    if (one == 0 && t >= at_s) {
      one = d.Offer(64, 64, priority);
    }
    d.Offer(64, 64, 0);
  }
  d.RunToIdle(until_s + 30);
  return one;
}

// Twice the engine's capacity of class 0 (seed-a100-7b serves about 10 req/s) with the old
// aging of 10 s a class. Before: the class-10 request was admitted, overtaken by every later
// class-0 request, and never reached the head, where alone its queue-ingress deadline was
// checked (live: 504 at the 4.5 s request deadline). Now admission counts the class-0 requests
// that will overtake it and refuses it at once, with Retry-After.
TEST(StarvationTest, ARequestThatMoreUrgentArrivalsWillOvertakeIsRefusedAtTheDoor) {
  config::EngineSettings s = ByPriority();
  s.priority_aging_s = 10;
  EngineDriver d(enginetest::Resolve(s));
  const RequestId low = SteadyLoadAndOne(d, 20, 10, 5, 10);
  const auto& o = d.outcome(low);
  EXPECT_EQ(o.decision.reason, OverloadReason::kQueueDelayExceeded)
      << "finished " << ToString(o.finish_reason) << " at " << o.finished_s;
  EXPECT_GE(o.decision.retry_after_s, 1);
  // Class 0 itself is still admitted as before: nothing more urgent overtakes it.
  int class0_admitted = 0;
  for (const auto& [id, r] : d.outcomes()) {
    class0_admitted += id != low && r.decision.admitted();
  }
  EXPECT_GT(class0_admitted, 100);
}

// At the rates where the queue drains (up to 1.4x capacity here), the class-10 request is
// admitted and served.
TEST(StarvationTest, BelowSustainedOverloadTheLowClassIsServed) {
  EngineDriver d(enginetest::Resolve(ByPriority()));
  const RequestId low = SteadyLoadAndOne(d, 12, 10, 5, 10);
  EXPECT_EQ(d.outcome(low).finish_reason, FinishReason::kLength);
  EXPECT_LT(d.outcome(low).ttft_s(), 1.0);
}

// With the default aging (0.25 s a class), class 10 is overtaken for at most 2.5 s: under the
// same overload it is served or refused at once, never left to its deadline.
TEST(StarvationTest, WithTheDefaultAgingTheLowClassIsServedOrRefusedAtOnce) {
  EngineDriver d(enginetest::Resolve(ByPriority()));
  const RequestId low = SteadyLoadAndOne(d, 20, 10, 5, 10);
  const auto& o = d.outcome(low);
  if (o.decision.admitted()) {
    EXPECT_EQ(o.finish_reason, FinishReason::kLength);
    EXPECT_LE(o.ttft_s(), 1.0);
  } else {
    EXPECT_EQ(o.decision.reason, OverloadReason::kQueueDelayExceeded);
  }
}

}  // namespace
}  // namespace spillway
