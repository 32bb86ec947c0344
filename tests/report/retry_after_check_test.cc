// The Retry-After check (report/retry_after_check.h): drain times computed by hand from a few
// queue spans, per queue, and the summary statistics.

#include "report/retry_after_check.h"

#include <gtest/gtest.h>

#include "report/run_recorder.h"

namespace spillway {
namespace {

TEST(RetryAfterCheckTest, OnlyOverloadAnswersWithARetryAfterAreChecked) {
  EXPECT_TRUE(RetryAfterChecked(429, "queue_delay_exceeded", 1));
  EXPECT_TRUE(RetryAfterChecked(503, "queue_full", 2));
  EXPECT_TRUE(RetryAfterChecked(429, "queue_deadline_exceeded", 1));
  EXPECT_FALSE(RetryAfterChecked(429, "rate_limited", 1)) << "the token bucket's refill time";
  EXPECT_FALSE(RetryAfterChecked(503, "draining", 1)) << "retry elsewhere";
  EXPECT_FALSE(RetryAfterChecked(429, "queue_delay_exceeded", 0)) << "no header";
  EXPECT_FALSE(RetryAfterChecked(400, "context_length_exceeded", 1));
  EXPECT_FALSE(RetryAfterChecked(504, "request_timeout", 1));
}

TEST(RetryAfterCheckTest, DrainTimeIsWhenTheLastRequestWaitingAtTheAnswerLeaves) {
  // Queue 0: A waits [0, 3), B [1, 2.5), C [2, 6), D [4, 5); queue 1: E [0.5, 9).
  const std::vector<QueueSpan> spans = {{0, 3, 0}, {1, 2.5, 0}, {2, 6, 0}, {4, 5, 0}, {0.5, 9, 1}};
  const std::vector<RetryAfterSample> samples = {
      {0.5, 1, 0},  // A: 3 - 0.5
      {1.5, 1, 0},  // A, B: 3 - 1.5
      {2.0, 1, 0},  // C entered at 2: 6 - 2
      {2.5, 1, 0},  // C: 6 - 2.5
      {3.9, 1, 0},  // C: 6 - 3.9
      {7.0, 1, 0},  // all gone
      {-1, 1, 0},   // before any
      {1.0, 1, 1},  // E alone: queue 0 does not count
      {1.0, 1, 2},  // an empty queue
  };
  const std::vector<Seconds> drains = DrainTimes(spans, samples);
  ASSERT_EQ(drains.size(), 9u);
  EXPECT_DOUBLE_EQ(drains[0], 2.5);
  EXPECT_DOUBLE_EQ(drains[1], 1.5);
  EXPECT_DOUBLE_EQ(drains[2], 4.0);
  EXPECT_DOUBLE_EQ(drains[3], 3.5);
  EXPECT_DOUBLE_EQ(drains[4], 2.1);
  EXPECT_DOUBLE_EQ(drains[5], 0.0);
  EXPECT_DOUBLE_EQ(drains[6], 0.0);
  EXPECT_DOUBLE_EQ(drains[7], 8.0);
  EXPECT_DOUBLE_EQ(drains[8], 0.0);
}

TEST(RetryAfterCheckTest, APoolsRefusalDrainsWhenItsFirstQueueDoes) {
  // Queue 0: [0, 3); queue 1: [0.5, 9); queue 2: [1, 1.5). A gateway's refusal (kAnyQueue) can
  // be retried as soon as any replica has room.
  const std::vector<QueueSpan> spans = {{0, 3, 0}, {0.5, 9, 1}, {1, 1.5, 2}};
  const std::vector<Seconds> drains =
      DrainTimes(spans, {{1.2, 1, kAnyQueue}, {2.0, 1, kAnyQueue}, {10, 1, kAnyQueue}});
  ASSERT_EQ(drains.size(), 3u);
  EXPECT_DOUBLE_EQ(drains[0], 0.3) << "queue 2 empties at 1.5";
  EXPECT_DOUBLE_EQ(drains[1], 0.0) << "queue 2 is already empty";
  EXPECT_DOUBLE_EQ(drains[2], 0.0);
  EXPECT_DOUBLE_EQ(DrainTimes({}, {{1, 1, kAnyQueue}})[0], 0.0) << "no queues at all";
}

TEST(RetryAfterCheckTest, CountsShortfallsBeyondTheTolerance) {
  const std::vector<QueueSpan> spans = {{0, 4, 0}};
  // Drain times 3.5, 2.5 and 1.0 against Retry-After 2, 2 and 3: shortfalls 1.5, 0.5, -2.
  const RetryAfterSummary s = CheckRetryAfter(spans, {{0.5, 2, 0}, {1.5, 2, 0}, {3.0, 3, 0}});
  EXPECT_EQ(s.checked, 3);
  EXPECT_EQ(s.shortfalls, 1);
  EXPECT_DOUBLE_EQ(s.tolerance_s, 1.0);
  EXPECT_DOUBLE_EQ(s.max_shortfall_s, 1.5);
  EXPECT_DOUBLE_EQ(s.max_drain_s, 3.5);
  EXPECT_DOUBLE_EQ(s.mean_drain_s, 7.0 / 3);
  EXPECT_DOUBLE_EQ(s.mean_retry_after_s, 7.0 / 3);
  // Every Retry-After beyond its drain time: the worst shortfall is negative.
  const RetryAfterSummary ok = CheckRetryAfter(spans, {{3.0, 3, 0}});
  EXPECT_EQ(ok.shortfalls, 0);
  EXPECT_DOUBLE_EQ(ok.max_shortfall_s, -2.0);
  EXPECT_EQ(CheckRetryAfter(spans, {}).checked, 0);
}

TEST(RetryAfterCheckTest, TheRunRecorderChecksWhatItWasGiven) {
  RunRecorder r(GoodputSlo{}, {});
  r.OnQueueSpan(0, 4);
  r.OnQueueSpan(1, 0.5);  // left before it entered: clamped to a zero-length stay
  r.OnRetryAfter(0.5, 429, "queue_delay_exceeded", 1);  // drain 3.5: short by 2.5
  r.OnRetryAfter(0.5, 429, "rate_limited", 1);          // not checked
  r.OnRetryAfter(0.5, 400, "context_length_exceeded", 0);
  const RunSummary s = r.Finish(10, 10);
  EXPECT_EQ(s.retry_after.checked, 1);
  EXPECT_EQ(s.retry_after.shortfalls, 1);
  EXPECT_DOUBLE_EQ(s.retry_after.max_shortfall_s, 2.5);
}

}  // namespace
}  // namespace spillway
