// Classification of answers (loadgen/classify.h): the overload contract of docs/serve.md as
// the client sees it.

#include "loadgen/classify.h"

#include <gtest/gtest.h>

namespace spillway::loadgen {
namespace {

constexpr const char* kQueueFullBody =
    R"({"error":{"message":"busy","type":"overloaded","param":null,"code":"queue_full"}})";

TEST(ClassifyHeadTest, OkIsAdmitted) { EXPECT_TRUE(ClassifyHead(200, "", "", "").admitted); }

TEST(ClassifyHeadTest, RefusalsTakeTheReasonFromTheHeaderThenTheBody) {
  const HeadVerdict a = ClassifyHead(429, "queue_delay_exceeded", "3", "");
  EXPECT_FALSE(a.admitted);
  EXPECT_EQ(a.outcome, AttemptOutcome::kRejected);
  EXPECT_EQ(a.reason, "queue_delay_exceeded");
  EXPECT_DOUBLE_EQ(a.retry_after_s, 3.0);
  const HeadVerdict b = ClassifyHead(503, "", "", kQueueFullBody);
  EXPECT_EQ(b.outcome, AttemptOutcome::kRejected);
  EXPECT_EQ(b.reason, "queue_full");
  EXPECT_DOUBLE_EQ(b.retry_after_s, 0.0);
  const HeadVerdict c = ClassifyHead(429, "", "", "slow down");
  EXPECT_EQ(c.reason, "http_429");
  const HeadVerdict too_long = ClassifyHead(
      400, "", "",
      R"({"error":{"message":"x","type":"invalid_request_error","code":"context_length_exceeded"}})");
  EXPECT_EQ(too_long.outcome, AttemptOutcome::kRejected);
  EXPECT_EQ(too_long.reason, "context_length_exceeded");
}

TEST(ClassifyHeadTest, QueueDeadline429IsADropNotARefusal) {
  EXPECT_EQ(ClassifyHead(429, "queue_deadline_exceeded", "1", "").outcome,
            AttemptOutcome::kDroppedAtQueueHead);
}

TEST(ClassifyHeadTest, OtherStatusesFail) {
  const HeadVerdict timeout = ClassifyHead(
      504, "", "", R"({"error":{"message":"x","type":"timeout","code":"request_timeout"}})");
  EXPECT_EQ(timeout.outcome, AttemptOutcome::kFailed);
  EXPECT_EQ(timeout.reason, "request_timeout");
  EXPECT_EQ(ClassifyHead(500, "", "", "").outcome, AttemptOutcome::kFailed);
  EXPECT_EQ(ClassifyHead(401, "", "", "").reason, "http_401");
}

StreamTracker Tracked(std::initializer_list<const char*> payloads) {
  StreamTracker t;
  double now = 0;
  for (const char* p : payloads) {
    t.OnPayload(p, now += 0.1);
  }
  return t;
}

constexpr const char* kToken = R"({"choices":[{"text":"a"}]})";

TEST(ClassifyStreamEndTest, ByErrorEventTimeoutAndBreak) {
  EXPECT_EQ(ClassifyStreamEnd(Tracked({kToken, "[DONE]"}), StreamStop::kEnded).outcome,
            AttemptOutcome::kCompleted);
  const EndVerdict dropped = ClassifyStreamEnd(
      Tracked(
          {R"({"error":{"message":"m","type":"rate_limit_error","code":"queue_deadline_exceeded"}})",
           "[DONE]"}),
      StreamStop::kEnded);
  EXPECT_EQ(dropped.outcome, AttemptOutcome::kDroppedAtQueueHead);
  EXPECT_EQ(dropped.reason, "queue_deadline_exceeded");
  const EndVerdict timeout = ClassifyStreamEnd(
      Tracked({kToken, R"({"error":{"message":"m","type":"timeout","code":"request_timeout"}})"}),
      StreamStop::kEnded);
  EXPECT_EQ(timeout.outcome, AttemptOutcome::kFailed);
  EXPECT_EQ(timeout.reason, "request_timeout");
  EXPECT_EQ(ClassifyStreamEnd(Tracked({}), StreamStop::kTtftTimeout).reason, "ttft_timeout");
  EXPECT_EQ(ClassifyStreamEnd(Tracked({kToken}), StreamStop::kTotalTimeout).outcome,
            AttemptOutcome::kAbandoned);
  EXPECT_EQ(ClassifyStreamEnd(Tracked({kToken}), StreamStop::kBroken).reason, "stream_broken");
  // A break after [DONE] loses nothing.
  EXPECT_EQ(ClassifyStreamEnd(Tracked({kToken, "[DONE]"}), StreamStop::kBroken).outcome,
            AttemptOutcome::kCompleted);
}

TEST(ParseRetryAfterTest, DeltaSecondsOnly) {
  EXPECT_DOUBLE_EQ(ParseRetryAfter("2"), 2.0);
  EXPECT_DOUBLE_EQ(ParseRetryAfter(" 1.5 "), 1.5);
  EXPECT_DOUBLE_EQ(ParseRetryAfter(""), 0.0);
  EXPECT_DOUBLE_EQ(ParseRetryAfter("-1"), 0.0);
  EXPECT_DOUBLE_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), 0.0);
}

TEST(ParseTtftForecastTest, ANonNegativeNumberOfSecondsOrNone) {
  EXPECT_DOUBLE_EQ(ParseTtftForecast("0.4125"), 0.4125);
  EXPECT_DOUBLE_EQ(ParseTtftForecast("0"), 0.0);
  for (const char* bad : {"", "-0.1", "0.4s", " 0.4", "nan", "inf", "abc"}) {
    EXPECT_EQ(ParseTtftForecast(bad), kNever) << "'" << bad << "'";
  }
}

TEST(ParsePriorityClassTest, AWholeInt32OrNothing) {
  EXPECT_EQ(ParsePriorityClass("1"), 1);
  EXPECT_EQ(ParsePriorityClass("0"), 0);
  EXPECT_EQ(ParsePriorityClass("12"), 12);
  EXPECT_FALSE(ParsePriorityClass("").has_value()) << "no header";
  EXPECT_FALSE(ParsePriorityClass("1x").has_value());
  EXPECT_FALSE(ParsePriorityClass("high").has_value());
  EXPECT_FALSE(ParsePriorityClass("99999999999").has_value()) << "beyond int32";
}

TEST(IsRetryableTest, AsTheSimulatorRetries) {
  AttemptRecord r;
  r.outcome = AttemptOutcome::kRejected;
  r.status = 429;
  EXPECT_TRUE(IsRetryable(r, false));
  r.status = 400;
  EXPECT_FALSE(IsRetryable(r, false));
  r.outcome = AttemptOutcome::kDroppedAtQueueHead;
  EXPECT_TRUE(IsRetryable(r, false));
  r.outcome = AttemptOutcome::kAbandoned;
  EXPECT_FALSE(IsRetryable(r, false));
  EXPECT_TRUE(IsRetryable(r, true));
  r.outcome = AttemptOutcome::kFailed;
  EXPECT_FALSE(IsRetryable(r, true));
  r.outcome = AttemptOutcome::kTransportError;
  EXPECT_FALSE(IsRetryable(r, true));
}

}  // namespace
}  // namespace spillway::loadgen
