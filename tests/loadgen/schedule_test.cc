// OpenLoopSchedule: arrivals are taken at their times on a driven clock, late ones at once with
// their lateness recorded, and a duration limit cuts the tail.

#include "loadgen/schedule.h"

#include <gtest/gtest.h>

#include <vector>

namespace spillway::loadgen {
namespace {

std::vector<Arrival> At(std::initializer_list<double> times) {
  std::vector<Arrival> out;
  for (const double t : times) {
    Arrival a;
    a.time_s = t;
    a.prompt_tokens = 1;
    a.output_tokens = 1;
    out.push_back(a);
  }
  return out;
}

TEST(OpenLoopScheduleTest, TakesWhatIsDueAndNothingMore) {
  OpenLoopSchedule s(At({0.1, 0.2, 0.2, 1.0}));
  EXPECT_DOUBLE_EQ(s.next_time_s(), 0.1);
  EXPECT_EQ(s.TakeDue(0.05), std::make_pair(std::size_t{0}, std::size_t{0}));
  EXPECT_EQ(s.TakeDue(0.1), std::make_pair(std::size_t{0}, std::size_t{1}));
  EXPECT_EQ(s.TakeDue(0.2), std::make_pair(std::size_t{1}, std::size_t{3}));
  EXPECT_DOUBLE_EQ(s.next_time_s(), 1.0);
  EXPECT_FALSE(s.finished());
  EXPECT_EQ(s.TakeDue(5.0), std::make_pair(std::size_t{3}, std::size_t{4}));
  EXPECT_TRUE(s.finished());
  EXPECT_EQ(s.next_time_s(), kNever);
  // Lateness: 0, 0, 0 (under 1 us, counted as 1 us) and 4 s for the last one.
  const Percentiles lag = s.lag();
  EXPECT_EQ(lag.count, 4);
  EXPECT_NEAR(lag.max, 4.0, 0.05);
  EXPECT_LT(lag.p50, 1e-5);
}

TEST(OpenLoopScheduleTest, TheDurationLimitDropsLaterArrivals) {
  OpenLoopSchedule s(At({0.5, 1.0, 1.5, 2.0}), 1.5);
  EXPECT_EQ(s.size(), 2u);
  s.TakeDue(10);
  EXPECT_TRUE(s.finished());
}

TEST(OpenLoopScheduleTest, StopEndsTheSchedule) {
  OpenLoopSchedule s(At({0.5, 1.0}));
  s.Stop();
  EXPECT_TRUE(s.finished());
  EXPECT_EQ(s.TakeDue(10), std::make_pair(std::size_t{2}, std::size_t{2}));
}

}  // namespace
}  // namespace spillway::loadgen
