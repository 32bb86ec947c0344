// Priority scheduling with aging (SchedulingPolicy::kPriority): a request's queue key is
// arrival_s + priority * priority_aging_s, so a more urgent class overtakes a less urgent one
// that arrived less than priority_aging_s earlier, but not one that arrived more than that
// earlier: the wait of a less urgent class is bounded and no class starves.

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "sched/fake_engine.h"
#include "sched/scheduler.h"

namespace spillway {
namespace {

using testing_util::FakeEngine;
using testing_util::Ids;
using testing_util::Spec;

SchedulerConfig PriorityConfig(Seconds aging_s, std::int32_t max_num_seqs = 1) {
  SchedulerConfig c;
  c.policy = SchedulingPolicy::kPriority;
  c.priority_aging_s = aging_s;
  c.max_num_seqs = max_num_seqs;
  return c;
}

// Keeps the only seat busy with request 100 so that the requests submitted afterwards queue
// up and compete when it finishes (after 3 steps, at t=3).
void OccupyTheSeat(FakeEngine& e) {
  e.Submit(Spec(100, 1, 3, /*arrival=*/0, /*priority=*/0));
  ASSERT_EQ(Ids(e.RunStep()), (std::vector<RequestId>{100}));
}

/// The id admitted by the next step that admits anything.
RequestId NextAdmitted(FakeEngine& e) {
  for (int i = 0; i < 100; ++i) {
    const StepPlan p = e.RunStep();
    for (const ScheduledSeq& s : p.seqs) {
      if (s.id != 100) {
        return s.id;
      }
    }
  }
  return 0;
}

TEST(SchedulerPriorityTest, UrgentRequestOvertakesLessUrgentOneThatArrivedWithinAgingWindow) {
  FakeEngine e(PriorityConfig(10.0), 100, 16);
  OccupyTheSeat(e);
  e.Submit(Spec(1, 4, 1, /*arrival=*/1.0, /*priority=*/1));  // key 11
  e.Submit(Spec(2, 4, 1, /*arrival=*/6.0, /*priority=*/0));  // key 6: arrived 5 s later
  EXPECT_EQ(NextAdmitted(e), 2u);
  EXPECT_EQ(NextAdmitted(e), 1u);
}

TEST(SchedulerPriorityTest, UrgentRequestDoesNotOvertakeOneThatArrivedMoreThanAgingEarlier) {
  FakeEngine e(PriorityConfig(10.0), 100, 16);
  OccupyTheSeat(e);
  e.Submit(Spec(1, 4, 1, /*arrival=*/1.0, /*priority=*/1));   // key 11
  e.Submit(Spec(2, 4, 1, /*arrival=*/16.0, /*priority=*/0));  // key 16: arrived 15 s later
  EXPECT_EQ(NextAdmitted(e), 1u);
  EXPECT_EQ(NextAdmitted(e), 2u);
}

TEST(SchedulerPriorityTest, SameArrivalIsOrderedByPriorityClass) {
  FakeEngine e(PriorityConfig(10.0, 256), 100, 16);
  e.Submit(Spec(1, 4, 1, 0.0, /*priority=*/2));
  e.Submit(Spec(2, 4, 1, 0.0, /*priority=*/0));
  e.Submit(Spec(3, 4, 1, 0.0, /*priority=*/1));
  EXPECT_EQ(Ids(e.Step()), (std::vector<RequestId>{2, 3, 1}));
}

TEST(SchedulerPriorityTest, AgingWindowScalesWithTheClassDistance) {
  // Class 2 is worth two aging windows: a class-0 request arriving 15 s later overtakes it
  // (key 20 vs 15), one arriving 25 s later does not (key 20 vs 25).
  {
    FakeEngine e(PriorityConfig(10.0), 100, 16);
    OccupyTheSeat(e);
    e.Submit(Spec(1, 4, 1, 0.0, /*priority=*/2));
    e.Submit(Spec(2, 4, 1, 15.0, /*priority=*/0));
    EXPECT_EQ(NextAdmitted(e), 2u);
  }
  {
    FakeEngine e(PriorityConfig(10.0), 100, 16);
    OccupyTheSeat(e);
    e.Submit(Spec(1, 4, 1, 0.0, /*priority=*/2));
    e.Submit(Spec(2, 4, 1, 25.0, /*priority=*/0));
    EXPECT_EQ(NextAdmitted(e), 1u);
  }
}

TEST(SchedulerPriorityTest, ZeroAgingIsPlainFcfs) {
  FakeEngine e(PriorityConfig(0.0, 256), 100, 16);
  e.Submit(Spec(1, 4, 1, 0.0, /*priority=*/2));
  e.Submit(Spec(2, 4, 1, 1.0, /*priority=*/0));
  EXPECT_EQ(Ids(e.Step()), (std::vector<RequestId>{1, 2}));
}

// A steady stream of class-0 requests (one per step, each served in one step) cannot starve a
// class-1 request: it is admitted within priority_aging_s (+ one step) of its arrival.
TEST(SchedulerPriorityTest, AgingBoundsTheWaitOfALessUrgentClassUnderContinuousLoad) {
  constexpr Seconds kAging = 10.0;
  FakeEngine e(PriorityConfig(kAging), 100, 16);
  e.Submit(Spec(1, 1, 1, /*arrival=*/0.0, /*priority=*/1));
  RequestId next_id = 2;
  for (int step = 0; step < 40 && !e.IsFinished(1); ++step) {
    e.Submit(Spec(next_id++, 1, 1, /*arrival=*/e.now(), /*priority=*/0));
    e.RunStep();
  }
  ASSERT_TRUE(e.IsFinished(1));
  EXPECT_LE(e.Finished(1).first_scheduled_s, 0.0 + kAging + 1.0);
  // Class-0 requests did overtake it meanwhile: it was not simply first.
  EXPECT_GE(e.Finished(1).first_scheduled_s, kAging - 1.0);
}

TEST(SchedulerPriorityTest, WithoutAgingTheSameStreamStarvesTheLessUrgentClass) {
  // Contrast for the test above: with a huge aging window the class-1 request never runs
  // while class-0 requests keep arriving.
  FakeEngine e(PriorityConfig(1e9), 100, 16);
  e.Submit(Spec(1, 1, 1, 0.0, /*priority=*/1));
  RequestId next_id = 2;
  for (int step = 0; step < 40; ++step) {
    e.Submit(Spec(next_id++, 1, 1, e.now(), /*priority=*/0));
    e.RunStep();
  }
  EXPECT_FALSE(e.EverPlanned(1));
}

TEST(SchedulerPriorityTest, PreemptedRequestKeepsItsQueueKey) {
  // A preempted request re-enters the queue with its original key, ahead of later arrivals of
  // the same class.
  SchedulerConfig c = PriorityConfig(10.0, /*max_num_seqs=*/2);
  FakeEngine e(c, 4, 4);
  e.Submit(Spec(1, 4, 8, 0.0, 0));
  e.Submit(Spec(2, 4, 8, 1.0, 0));
  for (int step = 0; step < 6; ++step) {
    e.RunStep();  // 2 is preempted at step 5
  }
  ASSERT_EQ(e.StateOf(2), RequestState::kPreempted);
  e.Submit(Spec(3, 1, 1, e.now(), 0));  // later arrival, same class, tiny
  e.RunUntilIdle();
  EXPECT_LT(e.Finished(2).first_scheduled_s, e.Finished(3).first_scheduled_s);
  // 3 cannot overtake 2 at the head of the queue even though it would fit sooner.
  Seconds readmitted = kNever;
  for (std::size_t i = 6; i < e.plans().size(); ++i) {
    for (const ScheduledSeq& s : e.plans()[i].seqs) {
      if (s.id == 2 && readmitted == kNever) {
        readmitted = e.plan_times()[i];
      }
    }
  }
  EXPECT_LE(readmitted, e.Finished(3).first_scheduled_s);
}

TEST(SchedulerPriorityTest, StatsAheadCountsOnlyTheWaitingRequestsANewOneWouldNotOvertake) {
  FakeEngine e(PriorityConfig(10.0), 100, 16);
  OccupyTheSeat(e);
  e.Submit(Spec(1, 8, 1, /*arrival=*/1.0, /*priority=*/1));   // key 11
  e.Submit(Spec(2, 4, 1, /*arrival=*/1.5, /*priority=*/0));   // key 1.5
  e.Submit(Spec(3, 16, 1, /*arrival=*/2.0, /*priority=*/1));  // key 12
  const EngineStats all = e.sched().stats();
  ASSERT_EQ(all.num_waiting, 3);
  EXPECT_EQ(all.num_waiting_ahead, -1) << "stats() gives no position";
  // An interactive (class 0) request at t=2 (key 2) would queue behind request 2 only.
  const EngineStats urgent = e.sched().StatsAhead(0, 2.0);
  EXPECT_EQ(urgent.num_waiting, 3);
  EXPECT_EQ(urgent.num_waiting_ahead, 1);
  EXPECT_EQ(urgent.prefill_backlog_ahead_tokens,
            4 + all.prefill_backlog_tokens - all.waiting_prompt_tokens);
  // A batch (class 1) request at t=2 (key 12) queues behind all three.
  const EngineStats batch = e.sched().StatsAhead(1, 2.0);
  EXPECT_EQ(batch.num_waiting_ahead, 3);
  EXPECT_EQ(batch.prefill_backlog_ahead_tokens, all.prefill_backlog_tokens);
}

TEST(SchedulerPriorityTest, StatsAheadUnderFcfsIsStats) {
  SchedulerConfig c = PriorityConfig(10.0);
  c.policy = SchedulingPolicy::kFcfs;
  FakeEngine e(c, 100, 16);
  e.Submit(Spec(1, 8, 1, /*arrival=*/1.0, /*priority=*/1));
  const EngineStats s = e.sched().StatsAhead(0, 2.0);
  EXPECT_EQ(s.num_waiting, 1);
  EXPECT_EQ(s.num_waiting_ahead, -1) << "every waiting request is ahead";
}

}  // namespace
}  // namespace spillway
