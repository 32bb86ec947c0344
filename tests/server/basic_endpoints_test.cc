// Basic behaviour of `spillway serve` over loopback: health and readiness probes, the model
// list, and the three shapes of a completion (non-streaming completion, non-streaming chat,
// streaming chat with usage).

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"

namespace spillway {
namespace {

using server_test::HttpResponse;
using server_test::IntAt;
using server_test::IsValidUtf8;
using server_test::ParseJson;
using server_test::PendingRequest;
using server_test::StringAt;
namespace json = boost::json;

class BasicEndpointsTest : public server_test::ServerFixture {};

TEST_F(BasicEndpointsTest, HealthAndReadyAnswer200WhenIdle) {
  const HttpResponse health = client().Get("/health");
  EXPECT_EQ(health.status, 200) << health.error << health.body;
  const auto health_json = ParseJson(health.body);
  ASSERT_TRUE(health_json.has_value()) << health.body;
  EXPECT_EQ(StringAt(*health_json, "/status"), "ok") << health.body;

  const HttpResponse ready = client().Get("/ready");
  EXPECT_EQ(ready.status, 200) << ready.error << ready.body;
  const auto ready_json = ParseJson(ready.body);
  ASSERT_TRUE(ready_json.has_value()) << ready.body;
  EXPECT_EQ(StringAt(*ready_json, "/status"), "ready") << ready.body;
}

TEST_F(BasicEndpointsTest, ModelsListsTheServedModelMarkedEmulated) {
  const HttpResponse r = client().Get("/v1/models");
  ASSERT_EQ(r.status, 200) << r.error << r.body;
  const auto v = ParseJson(r.body);
  ASSERT_TRUE(v.has_value()) << r.body;
  EXPECT_EQ(StringAt(*v, "/object"), "list");
  EXPECT_EQ(StringAt(*v, "/data/0/id"), "spillway-emulated") << r.body;
  EXPECT_EQ(StringAt(*v, "/data/0/object"), "model") << r.body;
  // The model says it is emulated, so no one mistakes its text for model output.
  const json::value* emulated = server_test::At(*v, "/data/0/spillway/emulated");
  ASSERT_NE(emulated, nullptr) << r.body;
  EXPECT_TRUE(emulated->is_bool() && emulated->get_bool()) << r.body;
  const auto executor = StringAt(*v, "/data/0/spillway/executor");
  ASSERT_TRUE(executor.has_value()) << r.body;
  EXPECT_NE(executor->find("emulated"), std::string::npos) << r.body;
}

TEST_F(BasicEndpointsTest, RetrieveModelReturnsTheModelObjectOr404ForAnother) {
  const HttpResponse r = client().Get("/v1/models/spillway-emulated");
  ASSERT_EQ(r.status, 200) << r.error << r.body;
  const auto v = ParseJson(r.body);
  ASSERT_TRUE(v.has_value()) << r.body;
  EXPECT_EQ(StringAt(*v, "/id"), "spillway-emulated") << r.body;
  EXPECT_EQ(StringAt(*v, "/object"), "model") << r.body;
  EXPECT_EQ(StringAt(*v, "/owned_by"), "spillway") << r.body;

  EXPECT_TRUE(
      server_test::IsOpenAiError(client().Get("/v1/models/gpt-4o"), 404, "model_not_found"));
}

TEST_F(BasicEndpointsTest, CompletionWithTokenIdPromptReportsExactUsageAndLengthFinish) {
  const HttpResponse r =
      client().Post("/v1/completions", R"({"prompt":[1,2,3],"max_tokens":8})", {}, 10);
  ASSERT_EQ(r.status, 200) << r.error << r.body;
  EXPECT_NE(r.Header("Content-Type").value_or("").find("application/json"), std::string::npos);
  const auto v = ParseJson(r.body);
  ASSERT_TRUE(v.has_value()) << r.body;
  EXPECT_EQ(StringAt(*v, "/object"), "text_completion") << r.body;
  EXPECT_EQ(StringAt(*v, "/model"), "spillway-emulated") << r.body;
  EXPECT_EQ(IntAt(*v, "/usage/prompt_tokens"), 3) << r.body;
  EXPECT_EQ(IntAt(*v, "/usage/completion_tokens"), 8) << r.body;
  EXPECT_EQ(IntAt(*v, "/usage/total_tokens"), 11) << r.body;
  EXPECT_EQ(StringAt(*v, "/choices/0/finish_reason"), "length") << r.body;
  const auto text = StringAt(*v, "/choices/0/text");
  ASSERT_TRUE(text.has_value()) << r.body;
  EXPECT_FALSE(text->empty());
  EXPECT_TRUE(IsValidUtf8(*text)) << *text;
}

TEST_F(BasicEndpointsTest, ChatCompletionReturnsAssistantMessageWithUsageAndLengthFinish) {
  const HttpResponse r = client().Post(
      "/v1/chat/completions",
      R"({"model":"spillway-emulated","messages":[{"role":"user","content":"Say hello."}],)"
      R"("max_tokens":8})",
      {}, 10);
  ASSERT_EQ(r.status, 200) << r.error << r.body;
  const auto v = ParseJson(r.body);
  ASSERT_TRUE(v.has_value()) << r.body;
  EXPECT_EQ(StringAt(*v, "/object"), "chat.completion") << r.body;
  EXPECT_EQ(StringAt(*v, "/choices/0/message/role"), "assistant") << r.body;
  EXPECT_EQ(StringAt(*v, "/choices/0/finish_reason"), "length") << r.body;
  const auto prompt_tokens = IntAt(*v, "/usage/prompt_tokens");
  ASSERT_TRUE(prompt_tokens.has_value()) << r.body;
  EXPECT_GT(*prompt_tokens, 0) << r.body;
  EXPECT_EQ(IntAt(*v, "/usage/completion_tokens"), 8) << r.body;
  const auto content = StringAt(*v, "/choices/0/message/content");
  ASSERT_TRUE(content.has_value()) << r.body;
  EXPECT_FALSE(content->empty());
  EXPECT_TRUE(IsValidUtf8(*content)) << *content;
}

TEST_F(BasicEndpointsTest, StreamingChatSendsDeltasThenUsageChunkThenDone) {
  constexpr int kMaxTokens = 12;
  server_test::HttpRequest request;
  request.method = "POST";
  request.target = "/v1/chat/completions";
  request.body = R"({"messages":[{"role":"user","content":"Count."}],"max_tokens":)" +
                 std::to_string(kMaxTokens) +
                 R"(,"stream":true,"stream_options":{"include_usage":true}})";
  PendingRequest stream(client().port(), request, 10);
  ASSERT_TRUE(stream.ok()) << stream.error();
  const HttpResponse& head = stream.ReadHead(10);
  ASSERT_EQ(head.status, 200) << head.error;
  EXPECT_NE(head.Header("Content-Type").value_or("").find("text/event-stream"), std::string::npos);
  const HttpResponse rest = stream.ReadResponse(20);
  ASSERT_EQ(rest.status, 200) << rest.error;
  ASSERT_TRUE(stream.complete());

  const std::vector<std::string> data = server_test::SseDataPayloads(rest.body);
  ASSERT_GE(data.size(), 3u) << rest.body;
  EXPECT_EQ(data.back(), "[DONE]") << rest.body;
  std::string text;
  int content_chunks = 0;
  std::optional<std::int64_t> usage_completion_tokens;
  std::string finish_reason;
  for (std::size_t i = 0; i + 1 < data.size(); ++i) {
    const auto chunk = ParseJson(data[i]);
    ASSERT_TRUE(chunk.has_value()) << "chunk " << i << " is not JSON: " << data[i];
    EXPECT_EQ(StringAt(*chunk, "/object"), "chat.completion.chunk") << data[i];
    if (const auto content = StringAt(*chunk, "/choices/0/delta/content")) {
      text += *content;
      ++content_chunks;
    }
    if (const auto reason = StringAt(*chunk, "/choices/0/finish_reason")) {
      finish_reason = *reason;
    }
    if (const auto n = IntAt(*chunk, "/usage/completion_tokens")) {
      usage_completion_tokens = n;
    }
  }
  EXPECT_EQ(content_chunks, kMaxTokens);
  EXPECT_FALSE(text.empty());
  EXPECT_TRUE(IsValidUtf8(text)) << text;
  EXPECT_EQ(finish_reason, "length");
  ASSERT_TRUE(usage_completion_tokens.has_value()) << "no usage chunk in:\n" << rest.body;
  EXPECT_EQ(*usage_completion_tokens, kMaxTokens);
}

}  // namespace
}  // namespace spillway
