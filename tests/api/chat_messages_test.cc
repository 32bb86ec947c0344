// /v1/chat/completions `messages` (OpenAI API reference, "Create chat completion").

#include <string>

#include <gtest/gtest.h>

#include "api/parse_test_util.h"
#include "api/request_parser.h"

namespace spillway::api {
namespace {

using testing_util::ChatBody;
using testing_util::ParseError;
using testing_util::ParseOk;
using testing_util::Rejected;

using testing_util::kChat;

std::string WithMessages(std::string_view messages) {
  return R"({"model": "m", "messages": )" + std::string(messages) + "}";
}

TEST(ChatMessagesTest, AllRolesAndStringContent) {
  const CompletionRequest r = ParseOk(WithMessages(R"([
      {"role": "developer", "content": "d"}, {"role": "system", "content": "s"},
      {"role": "user", "content": "u"}, {"role": "assistant", "content": "a"},
      {"role": "tool", "content": "t", "tool_call_id": "x"}])"),
                                      kChat);
  EXPECT_EQ(r.endpoint, Endpoint::kChatCompletions);
  ASSERT_EQ(r.messages.size(), 5u);
  EXPECT_EQ(r.messages[0].role, "developer");
  EXPECT_EQ(r.messages[4].role, "tool");
  EXPECT_EQ(r.messages[4].content, "t");
  EXPECT_TRUE(r.prompt_text.empty());
  EXPECT_TRUE(r.prompt_token_ids.empty());
}

TEST(ChatMessagesTest, TextPartsAreConcatenated) {
  const CompletionRequest r = ParseOk(WithMessages(R"([{"role": "user", "content": [
      {"type": "text", "text": "Hello, "}, {"type": "text", "text": "world"}]}])"),
                                      kChat);
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0].content, "Hello, world");
}

TEST(ChatMessagesTest, EmptyStringContentIsAllowed) {
  EXPECT_EQ(ParseOk(WithMessages(R"([{"role": "user", "content": ""}])"), kChat).messages.size(),
            1u);
}

TEST(ChatMessagesTest, AssistantMayOmitContent) {
  const CompletionRequest r = ParseOk(WithMessages(R"([{"role": "user", "content": "q"},
      {"role": "assistant", "content": null, "tool_calls": []}, {"role": "assistant"}])"),
                                      kChat);
  ASSERT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(r.messages[1].content, "");
  EXPECT_EQ(r.messages[2].content, "");
}

TEST(ChatMessagesTest, MissingWrongTypeOrEmptyMessages) {
  EXPECT_TRUE(Rejected(R"({"model": "m"})", kChat, "messages", "missing_required_parameter"));
  EXPECT_TRUE(Rejected(R"({"messages": null})", kChat, "messages", "missing_required_parameter"));
  EXPECT_TRUE(Rejected(R"({"messages": "hi"})", kChat, "messages", "invalid_type"));
  EXPECT_TRUE(Rejected(R"({"messages": {}})", kChat, "messages", "invalid_type"));
  EXPECT_TRUE(Rejected(R"({"messages": []})", kChat, "messages", "invalid_value"));
}

TEST(ChatMessagesTest, MessageCountLimit) {
  RequestLimits limits;
  limits.max_messages = 2;
  const std::string m = R"({"role": "user", "content": "x"})";
  EXPECT_EQ(ParseOk(WithMessages("[" + m + "," + m + "]"), kChat, limits).messages.size(), 2u);
  EXPECT_TRUE(Rejected(WithMessages("[" + m + "," + m + "," + m + "]"), kChat, "messages",
                       "invalid_value", limits));
}

TEST(ChatMessagesTest, MessageNotAnObject) {
  EXPECT_TRUE(Rejected(WithMessages(R"(["hi"])"), kChat, "messages[0]", "invalid_type"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user", "content": "a"}, 3])"), kChat,
                       "messages[1]", "invalid_type"));
}

TEST(ChatMessagesTest, RoleRules) {
  EXPECT_TRUE(Rejected(WithMessages(R"([{"content": "a"}])"), kChat, "messages[0].role",
                       "missing_required_parameter"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": 1, "content": "a"}])"), kChat, "messages[0].role",
                       "invalid_type"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "robot", "content": "a"}])"), kChat,
                       "messages[0].role", "invalid_value"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "User", "content": "a"}])"), kChat,
                       "messages[0].role", "invalid_value"));
  EXPECT_EQ(ParseError(WithMessages(R"([{"role": "robot", "content": "a"}])"), kChat).message,
            "'messages[0].role' must be one of \"system\", \"user\", \"assistant\", \"tool\", "
            "\"developer\", got \"robot\"");
}

TEST(ChatMessagesTest, ContentRules) {
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user"}])"), kChat, "messages[0].content",
                       "missing_required_parameter"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "system", "content": null}])"), kChat,
                       "messages[0].content", "missing_required_parameter"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user", "content": 5}])"), kChat,
                       "messages[0].content", "invalid_type"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user", "content": {"text": "a"}}])"), kChat,
                       "messages[0].content", "invalid_type"));
  EXPECT_TRUE(Rejected(WithMessages(R"([{"role": "user", "content": []}])"), kChat,
                       "messages[0].content", "invalid_value"));
}

TEST(ChatMessagesTest, ContentPartRules) {
  const auto parts = [](std::string_view p) {
    return WithMessages(R"([{"role": "user", "content": [{"type": "text", "text": "ok"}, )" +
                        std::string(p) + "]}]");
  };
  EXPECT_TRUE(Rejected(parts(R"("text")"), kChat, "messages[0].content[1]", "invalid_type"));
  EXPECT_TRUE(Rejected(parts(R"({"text": "a"})"), kChat, "messages[0].content[1].type",
                       "missing_required_parameter"));
  EXPECT_TRUE(Rejected(parts(R"({"type": "text"})"), kChat, "messages[0].content[1].text",
                       "missing_required_parameter"));
  EXPECT_TRUE(Rejected(parts(R"({"type": "text", "text": 3})"), kChat,
                       "messages[0].content[1].text", "invalid_type"));
  EXPECT_TRUE(Rejected(parts(R"({"type": "image_url", "image_url": {"url": "http://x"}})"), kChat,
                       "messages[0].content[1].type", "unsupported_content_part"));
  EXPECT_TRUE(Rejected(parts(R"({"type": 7})"), kChat, "messages[0].content[1].type",
                       "unsupported_content_part"));
  EXPECT_EQ(ParseError(parts(R"({"type": "input_audio"})"), kChat).message,
            "'messages[0].content[1].type' must be \"text\" (only text content parts are "
            "supported), got \"input_audio\"");
}

TEST(ChatMessagesTest, CompletionFieldsAreIgnoredOnChat) {
  const CompletionRequest r = ParseOk(ChatBody(R"("prompt": 5)"), kChat);
  EXPECT_TRUE(r.prompt_text.empty());
  EXPECT_EQ(r.messages.size(), 1u);
}

}  // namespace
}  // namespace spillway::api
