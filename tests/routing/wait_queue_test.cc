// The gateway's wait queue (routing/wait_queue.h) and the pool's use of it (Pool::Admit,
// DispatchNext, CancelWaiting): a request no endpoint can start within its TTFT SLO now waits
// for a slot up to its TTL, most urgent effective class first with aging, FIFO within a class;
// it leaves routed with what is left of its budget, or expired with 429
// queue_deadline_exceeded; the baselines never queue.

#include "routing/wait_queue.h"

#include <vector>

#include <gtest/gtest.h>

#include "routing/pool.h"
#include "routing/routing_test_util.h"

namespace spillway::routing {
namespace {

using routing_test::Priors;
// (router_test.cc, in the same unity batch, has a helper named Pool.)
using WaitPool = ::spillway::routing::Pool;

WaitQueueConfig QueueConfig(Seconds max_wait_s = 0.25, std::int32_t max_queued = 8,
                            Seconds aging_s = 0.1) {
  return {.max_wait_s = max_wait_s, .max_queued = max_queued, .aging_s = aging_s};
}

TEST(WaitQueueTest, TheMostUrgentEffectiveClassGoesFirstFifoWithinAClass) {
  WaitQueue q(QueueConfig(1.0, 8, 10.0));  // aging too slow to matter here
  ASSERT_TRUE(q.Push(1, {.priority = 2}, 1.0, 0.0));
  ASSERT_TRUE(q.Push(2, {.priority = 0}, 1.0, 0.1));
  ASSERT_TRUE(q.Push(3, {.priority = 0}, 1.0, 0.2));
  EXPECT_EQ(q.Next(0.3)->ticket, 2u);
  q.Remove(2);
  EXPECT_EQ(q.Next(0.3)->ticket, 3u);
  q.Remove(3);
  EXPECT_EQ(q.Next(0.3)->ticket, 1u);
}

TEST(WaitQueueTest, AgingLetsALowClassCompeteAfterPriorityTimesAgingSeconds) {
  WaitQueue q(QueueConfig(1.0, 8, 0.1));
  ASSERT_TRUE(q.Push(1, {.priority = 2}, 1.0, 0.0));
  ASSERT_TRUE(q.Push(2, {.priority = 0}, 1.0, 0.15));
  EXPECT_EQ(q.Next(0.15)->ticket, 2u) << "class 2 aged one step is class 1: class 0 first";
  EXPECT_EQ(q.Next(0.2)->ticket, 1u) << "aged two steps it is class 0 and arrived first";
}

TEST(WaitQueueTest, BoundedAndOffAtZeroWait) {
  WaitQueue q(QueueConfig(0.25, 2));
  EXPECT_TRUE(q.Push(1, {}, 1.0, 0));
  EXPECT_TRUE(q.Push(2, {}, 1.0, 0));
  EXPECT_FALSE(q.Push(3, {}, 1.0, 0)) << "full at max_queued";
  EXPECT_EQ(q.size(), 2u);
  WaitQueue off(QueueConfig(0.0));
  EXPECT_FALSE(off.enabled());
  EXPECT_FALSE(off.Push(1, {}, 1.0, 0));
}

TEST(WaitQueueTest, TheTtlIsTheShorterOfMaxWaitAndTheSlo) {
  WaitQueue q(QueueConfig(0.25));
  ASSERT_TRUE(q.Push(1, {}, 1.0, 0.0));
  ASSERT_TRUE(q.Push(2, {}, 0.1, 0.0));
  EXPECT_EQ(q.Expired(0.05), nullptr);
  EXPECT_EQ(q.Expired(0.1)->ticket, 2u);
  q.Remove(2);
  EXPECT_EQ(q.Expired(0.2), nullptr);
  EXPECT_EQ(q.Expired(0.25)->ticket, 1u);
  EXPECT_FALSE(q.Remove(7).has_value());
}

TEST(WaitQueueTest, AQueueThatStoodForMaxWaitServesNewestFirstAndWaitsOnlyBriefly) {
  WaitQueue q(QueueConfig(0.25));  // standing_max_wait_s 0.02
  ASSERT_TRUE(q.Push(1, {}, 1.0, 0.0));
  ASSERT_TRUE(q.Push(2, {}, 1.0, 0.2));
  EXPECT_FALSE(q.Standing(0.2));
  EXPECT_EQ(q.Next(0.2)->ticket, 1u) << "FIFO while it absorbs a burst";
  ASSERT_TRUE(q.Push(3, {}, 1.0, 0.3));
  EXPECT_TRUE(q.Standing(0.3)) << "not empty since 0: it stands";
  EXPECT_EQ(q.Next(0.3)->ticket, 3u) << "newest first (adaptive LIFO)";
  EXPECT_EQ(q.Expired(0.3)->ticket, 1u);
  q.Remove(1);
  EXPECT_EQ(q.Expired(0.3)->ticket, 2u) << "waited 0.1 s > 0.02 s while it stands";
  q.Remove(2);
  EXPECT_EQ(q.Expired(0.3), nullptr);
  EXPECT_EQ(q.Expired(0.32)->ticket, 3u);
  q.Remove(3);
  ASSERT_TRUE(q.Push(4, {}, 1.0, 0.4));
  EXPECT_FALSE(q.Standing(0.4)) << "it emptied: a new burst";
}

/// Two endpoints with a full batch of 4 and `waiting` queued, scraped at 0: predicted TTFT of a
/// 400-token prompt is waiting / 10 + 0.1 s.
WaitPool TwoEndpoints(std::int32_t waiting, RouterPolicy policy = RouterPolicy::kGateway) {
  std::vector<EndpointState> states;
  for (int i = 0; i < 2; ++i) {
    states.emplace_back("e" + std::to_string(i), true, Priors());
  }
  PoolConfig config;
  config.router.policy = policy;
  config.router.ttft_slo_s = 1.0;
  config.queue = QueueConfig(0.25);
  WaitPool pool(std::move(states), config);
  for (std::size_t i = 0; i < 2; ++i) {
    pool.OnScrape(i, {.num_waiting = waiting, .num_running = 4, .kv_usage = 0.5}, 0);
  }
  return pool;
}

TEST(PoolWaitTest, ARequestNoEndpointCanStartNowWaitsAndGoesWhenASlotFrees) {
  WaitPool pool = TwoEndpoints(10);  // 1.1 s predicted: over the SLO
  const WaitPool::Placement p = pool.Admit(1, {.prompt_tokens = 400}, 0.0);
  ASSERT_EQ(p.kind, WaitPool::Placement::Kind::kQueued);
  EXPECT_EQ(pool.waiting(), 1u);
  EXPECT_FALSE(pool.DispatchNext(0.05).has_value()) << "nothing changed: it keeps waiting";
  pool.OnScrape(0, {.num_waiting = 5, .num_running = 4}, 0.1);  // 0.6 s <= 0.9 s left
  const std::optional<WaitPool::Placement> d = pool.DispatchNext(0.1);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->kind, WaitPool::Placement::Kind::kRouted);
  EXPECT_EQ(d->ticket, 1u);
  EXPECT_TRUE(d->pick.decision.forwarded());
  EXPECT_EQ(d->pick.decision.endpoint, 0);
  EXPECT_NEAR(d->waited_s, 0.1, 1e-12);
  EXPECT_EQ(pool.endpoint(0).in_flight(), 1) << "recorded as sent";
  EXPECT_EQ(pool.waiting(), 0u);
}

TEST(PoolWaitTest, ItLeavesOnlyWithinWhatIsLeftOfItsTtftBudget) {
  WaitPool pool = TwoEndpoints(10);
  ASSERT_EQ(pool.Admit(1, {.prompt_tokens = 400}, 0.0).kind, WaitPool::Placement::Kind::kQueued);
  pool.OnScrape(0, {.num_waiting = 8, .num_running = 4}, 0.2);  // 0.9 s > 0.8 s left
  EXPECT_FALSE(pool.DispatchNext(0.2).has_value());
}

TEST(PoolWaitTest, PastItsTtlItExpiresWith429QueueDeadlineExceeded) {
  WaitPool pool = TwoEndpoints(10);
  ASSERT_EQ(pool.Admit(1, {.prompt_tokens = 400}, 0.0).kind, WaitPool::Placement::Kind::kQueued);
  const std::optional<WaitPool::Placement> d = pool.DispatchNext(0.25);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->kind, WaitPool::Placement::Kind::kExpired);
  EXPECT_EQ(d->pick.decision.verdict, Verdict::kShed);
  EXPECT_EQ(d->pick.decision.reason, OverloadReason::kQueueDeadlineExceeded);
  EXPECT_GE(d->pick.decision.retry_after_s, 1.0);
  EXPECT_EQ(pool.waiting(), 0u);
}

TEST(PoolWaitTest, ARequestThatMayNotWaitIsRefusedWhereItWouldQueue) {
  WaitPool pool = TwoEndpoints(10);  // 1.1 s predicted: over the SLO
  const WaitPool::Placement p = pool.Admit(1, {.prompt_tokens = 400, .may_wait = false}, 0.0);
  EXPECT_EQ(p.kind, WaitPool::Placement::Kind::kRouted);
  EXPECT_EQ(p.pick.decision.verdict, Verdict::kShed);
  EXPECT_EQ(p.pick.decision.reason, OverloadReason::kQueueDelayExceeded);
  EXPECT_EQ(pool.waiting(), 0u);
  // Behind a waiting request as urgent, too: refused, not queued, even with a free slot.
  ASSERT_EQ(pool.Admit(2, {.prompt_tokens = 400}, 0.0).kind, WaitPool::Placement::Kind::kQueued);
  pool.OnScrape(1, {.num_waiting = 0, .num_running = 0}, 0.05);
  const WaitPool::Placement q = pool.Admit(3, {.prompt_tokens = 400, .may_wait = false}, 0.05);
  EXPECT_EQ(q.pick.decision.verdict, Verdict::kShed);
  EXPECT_EQ(pool.waiting(), 1u);
  // Where the pool can start it now, it goes.
  WaitPool idle = TwoEndpoints(0);
  EXPECT_TRUE(
      idle.Admit(4, {.prompt_tokens = 400, .may_wait = false}, 0.0).pick.decision.forwarded());
}

TEST(PoolWaitTest, ArrivalsDoNotOvertakeThoseWaiting) {
  WaitPool pool = TwoEndpoints(10);
  ASSERT_EQ(pool.Admit(1, {.prompt_tokens = 400}, 0.0).kind, WaitPool::Placement::Kind::kQueued);
  pool.OnScrape(1, {.num_waiting = 0, .num_running = 0}, 0.05);  // a free endpoint now
  ASSERT_EQ(pool.Admit(2, {.prompt_tokens = 400}, 0.05).kind, WaitPool::Placement::Kind::kQueued)
      << "the free slot is the first waiting one's";
  const std::optional<WaitPool::Placement> first = pool.DispatchNext(0.05);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->ticket, 1u);
  const std::optional<WaitPool::Placement> second = pool.DispatchNext(0.05);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->ticket, 2u);
  EXPECT_TRUE(second->pick.decision.forwarded());
}

TEST(PoolWaitTest, AFullQueueRefusesWith429QueueDelayExceeded) {
  WaitPool pool = TwoEndpoints(10);
  for (Ticket t = 1; t <= 8; ++t) {
    ASSERT_EQ(pool.Admit(t, {.prompt_tokens = 400}, 0.0).kind, WaitPool::Placement::Kind::kQueued);
  }
  const WaitPool::Placement full = pool.Admit(9, {.prompt_tokens = 400}, 0.0);
  EXPECT_EQ(full.kind, WaitPool::Placement::Kind::kRouted);
  EXPECT_EQ(full.pick.decision.verdict, Verdict::kShed);
  EXPECT_EQ(full.pick.decision.reason, OverloadReason::kQueueDelayExceeded);
  EXPECT_EQ(pool.waiting(), 8u);
}

TEST(PoolWaitTest, APromptWhosePrefillAloneMissesTheSloIsRefusedAtOnce) {
  WaitPool pool = TwoEndpoints(10);
  const WaitPool::Placement p = pool.Admit(1, {.prompt_tokens = 8000}, 0.0);  // 2 s of prefill
  EXPECT_EQ(p.kind, WaitPool::Placement::Kind::kRouted);
  EXPECT_EQ(p.pick.decision.verdict, Verdict::kShed);
  EXPECT_EQ(pool.waiting(), 0u);
  // Nor does it queue behind others that wait: refused at once all the same.
  ASSERT_EQ(pool.Admit(2, {.prompt_tokens = 400}, 0.0).kind, WaitPool::Placement::Kind::kQueued);
  const WaitPool::Placement q = pool.Admit(3, {.prompt_tokens = 8000}, 0.0);
  EXPECT_EQ(q.kind, WaitPool::Placement::Kind::kRouted);
  EXPECT_EQ(q.pick.decision.verdict, Verdict::kShed);
  EXPECT_EQ(pool.waiting(), 1u);
}

TEST(PoolWaitTest, AClientThatLeavesLeavesTheQueue) {
  WaitPool pool = TwoEndpoints(10);
  ASSERT_EQ(pool.Admit(1, {.prompt_tokens = 400}, 0.0).kind, WaitPool::Placement::Kind::kQueued);
  EXPECT_TRUE(pool.CancelWaiting(1));
  EXPECT_FALSE(pool.CancelWaiting(1));
  EXPECT_FALSE(pool.DispatchNext(1.0).has_value());
}

TEST(PoolWaitTest, WhenNoEndpointTakesWorkTheWaitingAre503NoEndpoint) {
  WaitPool pool = TwoEndpoints(10);
  ASSERT_EQ(pool.Admit(1, {.prompt_tokens = 400}, 0.0).kind, WaitPool::Placement::Kind::kQueued);
  pool.OnDraining(0, 0.1);
  pool.OnDraining(1, 0.1);
  const std::optional<WaitPool::Placement> d = pool.DispatchNext(0.1);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->kind, WaitPool::Placement::Kind::kRouted);
  EXPECT_EQ(d->pick.decision.verdict, Verdict::kHardLimit);
  EXPECT_EQ(d->pick.decision.reason, OverloadReason::kNoEndpoint);
}

TEST(PoolWaitTest, ADrainRefusesEveryoneWaiting503Draining) {
  WaitPool pool = TwoEndpoints(10);
  ASSERT_EQ(pool.Admit(1, {.prompt_tokens = 400}, 0.0).kind, WaitPool::Placement::Kind::kQueued);
  ASSERT_EQ(pool.Admit(2, {.prompt_tokens = 400}, 0.0).kind, WaitPool::Placement::Kind::kQueued);
  const std::vector<WaitPool::Placement> out = pool.DrainWaiting(0.1);
  ASSERT_EQ(out.size(), 2u);
  for (const WaitPool::Placement& p : out) {
    EXPECT_EQ(p.pick.decision.verdict, Verdict::kHardLimit);
    EXPECT_EQ(p.pick.decision.reason, OverloadReason::kDraining);
  }
  EXPECT_EQ(pool.waiting(), 0u);
}

TEST(PoolWaitTest, TheBaselinesNeverQueue) {
  WaitPool pool = TwoEndpoints(10, RouterPolicy::kLlmd);
  const WaitPool::Placement p = pool.Admit(1, {.prompt_tokens = 400, .priority = 1}, 0.0);
  EXPECT_EQ(p.kind, WaitPool::Placement::Kind::kRouted);
  EXPECT_EQ(p.pick.decision.verdict, Verdict::kShed) << "llm-d sheds a sheddable request";
  EXPECT_EQ(pool.waiting(), 0u);
}

}  // namespace
}  // namespace spillway::routing
