// The one mapping from the event that ends a generation to its reply (server/generation_end.h),
// which the JSON and the SSE sinks share: statuses, types and codes from the overload contract.

#include "server/generation_end.h"

#include <gtest/gtest.h>

#include "api/overload_contract.h"

namespace spillway::server {
namespace {

const GenerationLimits kLimits{1.0, 4.5, 30};

StreamEvent Finished(FinishReason reason, Seconds retry_after_s = 1) {
  StreamEvent ev;
  ev.kind = StreamEvent::Kind::kFinished;
  ev.reason = reason;
  ev.retry_after_s = retry_after_s;
  return ev;
}

std::string HeaderOf(const GenerationEnd& end, const std::string& name) {
  for (const auto& [k, v] : end.headers) {
    if (k == name) {
      return v;
    }
  }
  return "";
}

TEST(GenerationEndTest, CompletionsFinishWithTheirReason) {
  for (const FinishReason r : {FinishReason::kLength, FinishReason::kStop}) {
    const GenerationEnd end = EndOf(Finished(r), false, kLimits);
    EXPECT_EQ(end.kind, GenerationEnd::Kind::kFinished);
    EXPECT_EQ(end.finish_reason, ToString(r));
    EXPECT_FALSE(end.abort.has_value());
  }
}

TEST(GenerationEndTest, TheDeadlineIsA504AndAbortsTheWork) {
  StreamEvent timeout;
  timeout.kind = StreamEvent::Kind::kTimeout;
  for (const GenerationEnd& end :
       {EndOf(timeout, false, kLimits), EndOf(StreamEvent{}, /*channel_error=*/true, kLimits)}) {
    EXPECT_EQ(end.kind, GenerationEnd::Kind::kError);
    EXPECT_EQ(end.error.http_status, 504);
    EXPECT_EQ(end.error.code, "request_timeout");
    EXPECT_EQ(end.error.type, "timeout");
    EXPECT_NE(end.error.message.find("4.5 s"), std::string::npos);
    EXPECT_EQ(end.abort, AbortCause::kServerTimeout);
  }
}

TEST(GenerationEndTest, AQueueHeadDropIsA429WithItsRetryAfter) {
  const GenerationEnd end = EndOf(Finished(FinishReason::kDeadline, 3), false, kLimits);
  EXPECT_EQ(end.error.http_status, 429);
  EXPECT_EQ(end.error.code, "queue_deadline_exceeded");
  EXPECT_EQ(end.error.type, api::FindContractRow("queue_deadline_exceeded")->error_type);
  EXPECT_EQ(HeaderOf(end, "Retry-After"), "3");
  EXPECT_EQ(HeaderOf(end, "X-Overload-Reason"), "queue_deadline_exceeded");
}

TEST(GenerationEndTest, AnEngineFailureIsA503WithItsReason) {
  const GenerationEnd end = EndOf(Finished(FinishReason::kPreemptionLimit), false, kLimits);
  EXPECT_EQ(end.error.http_status, 503);
  EXPECT_EQ(end.error.code, "preemption_limit");
  EXPECT_EQ(HeaderOf(end, "Retry-After"), "1");
  EXPECT_EQ(HeaderOf(end, "X-Overload-Reason"), "preemption_limit");
}

TEST(GenerationEndTest, ShutdownSaysDrainingAndClientGoneAbortsWithoutAReply) {
  StreamEvent shutdown;
  shutdown.kind = StreamEvent::Kind::kShutdown;
  const GenerationEnd drained = EndOf(shutdown, false, kLimits);
  EXPECT_EQ(drained.error.http_status, 503);
  EXPECT_EQ(drained.error.code, "draining");
  EXPECT_FALSE(drained.abort.has_value());  // AbortAll aborted it already
  StreamEvent gone;
  gone.kind = StreamEvent::Kind::kClientGone;
  const GenerationEnd left = EndOf(gone, false, kLimits);
  EXPECT_EQ(left.kind, GenerationEnd::Kind::kClientGone);
  EXPECT_EQ(left.abort, AbortCause::kClientDisconnect);
}

}  // namespace
}  // namespace spillway::server
