// ReadStreamChunk and StreamTracker: what a streamed completion's payloads say, and the
// client-side timing read from them.

#include "loadgen/stream_tracker.h"

#include <gtest/gtest.h>

#include "loadgen/stream_chunk.h"

namespace spillway::loadgen {
namespace {

constexpr const char* kTokenChunk =
    R"({"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":" word","finish_reason":null}],"usage":null})";
constexpr const char* kFinish =
    R"({"id":"cmpl-1","choices":[{"index":0,"text":"","finish_reason":"length"}]})";
constexpr const char* kUsage =
    R"({"id":"cmpl-1","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":3,"total_tokens":7}})";

TEST(StreamChunkTest, CompletionTextIsContentAndTheFinishChunkIsNot) {
  EXPECT_TRUE(ReadStreamChunk(kTokenChunk).has_content);
  EXPECT_FALSE(ReadStreamChunk(kFinish).has_content);
  EXPECT_FALSE(ReadStreamChunk(kTokenChunk).completion_tokens.has_value());
}

TEST(StreamChunkTest, ChatDeltaContentIsContentAndTheRoleChunkIsNot) {
  EXPECT_TRUE(ReadStreamChunk(R"({"choices":[{"delta":{"content":"hi"},"finish_reason":null}]})")
                  .has_content);
  EXPECT_FALSE(
      ReadStreamChunk(R"({"choices":[{"delta":{"role":"assistant","content":""}}]})").has_content);
}

TEST(StreamChunkTest, UsageDoneErrorsAndJunk) {
  EXPECT_EQ(ReadStreamChunk(kUsage).completion_tokens, 3);
  EXPECT_TRUE(ReadStreamChunk("[DONE]").done);
  const StreamChunk spillway = ReadStreamChunk(
      R"({"error":{"message":"Dropped","type":"rate_limit_error","param":null,"code":"queue_deadline_exceeded"}})");
  ASSERT_TRUE(spillway.error.has_value());
  EXPECT_EQ(spillway.error->code, "queue_deadline_exceeded");
  EXPECT_EQ(spillway.error->message, "Dropped");
  // vLLM: an integer code inside "error"; an ErrorResponse sent as a chunk.
  EXPECT_EQ(ReadStreamChunk(
                R"({"error":{"object":"error","message":"m","type":"BadRequestError","code":400}})")
                .error->code,
            "400");
  EXPECT_EQ(ReadStreamChunk(R"({"object":"error","message":"m","type":"InternalServerError"})")
                .error->code,
            "InternalServerError");
  EXPECT_TRUE(ReadStreamChunk("not json").malformed);
  EXPECT_TRUE(ReadStreamChunk("[1,2]").malformed);
}

TEST(ReadErrorBodyTest, ReadsTheOpenAiErrorBody) {
  EXPECT_EQ(
      ReadErrorBody(R"({"error":{"message":"x","type":"overloaded","code":"queue_full"}})")->code,
      "queue_full");
  EXPECT_FALSE(ReadErrorBody("<html>busy</html>").has_value());
  EXPECT_FALSE(ReadErrorBody(R"({"detail":"x"})").has_value());
}

TEST(StreamTrackerTest, FirstTokenGapsAndUsageCount) {
  StreamTracker t;
  EXPECT_FALSE(t.OnPayload(kTokenChunk, 1.00).has_value());
  EXPECT_DOUBLE_EQ(t.first_token_s(), 1.00);
  const auto gap1 = t.OnPayload(kTokenChunk, 1.25);
  const auto gap2 = t.OnPayload(kTokenChunk, 1.75);
  ASSERT_TRUE(gap1.has_value() && gap2.has_value());
  EXPECT_DOUBLE_EQ(*gap1, 0.25);
  EXPECT_DOUBLE_EQ(*gap2, 0.50);
  EXPECT_FALSE(t.OnPayload(kFinish, 1.80).has_value());
  EXPECT_EQ(t.output_tokens(), 3);  // content events while no usage came
  EXPECT_FALSE(t.ended());
  t.OnPayload(kUsage, 1.80);
  t.OnPayload("[DONE]", 1.81);
  EXPECT_TRUE(t.ended());
  EXPECT_TRUE(t.saw_done());
  EXPECT_EQ(t.output_tokens(), 3);
  EXPECT_EQ(t.content_events(), 3);
}

TEST(StreamTrackerTest, UsageWinsOverTheEventCount) {
  StreamTracker t;
  t.OnPayload(kTokenChunk, 0.1);  // one chunk, but the server batched three tokens into it
  t.OnPayload(kUsage, 0.2);
  EXPECT_EQ(t.output_tokens(), 3);
}

TEST(StreamTrackerTest, AnErrorEventEndsTheStream) {
  StreamTracker t;
  t.OnPayload(R"({"error":{"message":"m","type":"timeout","param":null,"code":"request_timeout"}})",
              2.0);
  EXPECT_TRUE(t.ended());
  EXPECT_FALSE(t.saw_done());
  EXPECT_EQ(t.first_token_s(), kNever);
  EXPECT_EQ(t.error()->code, "request_timeout");
}

}  // namespace
}  // namespace spillway::loadgen
