// Response bodies in the OpenAI shapes (API reference: the completion object, the chat
// completion object, the chat completion chunk object) and SSE framing.

#include <string>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "api/responses.h"

namespace spillway::api {
namespace {

namespace json = boost::json;

ResponseMeta Meta(Endpoint endpoint) {
  ResponseMeta meta;
  meta.endpoint = endpoint;
  meta.id = endpoint == Endpoint::kChatCompletions ? "chatcmpl-1" : "cmpl-1";
  meta.created_s = 1700000000;
  meta.model = "seed-7b";
  return meta;
}

/// Parses `text`, failing the test when it is not a JSON object.
json::object ParseObject(const std::string& text) {
  json::error_code ec;
  json::value value = json::parse(text, ec);
  EXPECT_FALSE(ec) << text;
  EXPECT_TRUE(value.is_object()) << text;
  return value.is_object() ? value.get_object() : json::object();
}

void ExpectEnvelope(const json::object& body, const char* id, const char* object) {
  EXPECT_EQ(body.at("id"), id);
  EXPECT_EQ(body.at("object"), object);
  EXPECT_EQ(body.at("created"), 1700000000);
  EXPECT_EQ(body.at("model"), "seed-7b");
}

TEST(ResponsesTest, TextCompletion) {
  const json::object body = ParseObject(
      CompletionJson(Meta(Endpoint::kCompletions), " alpha \"quoted\"\n", "length", Usage{12, 3}));
  ExpectEnvelope(body, "cmpl-1", "text_completion");
  ASSERT_EQ(body.at("choices").as_array().size(), 1u);
  const json::object& choice = body.at("choices").at(0).as_object();
  EXPECT_EQ(choice.at("index"), 0);
  EXPECT_EQ(choice.at("text"), " alpha \"quoted\"\n");
  EXPECT_TRUE(choice.at("logprobs").is_null());
  EXPECT_EQ(choice.at("finish_reason"), "length");
  EXPECT_FALSE(choice.contains("message"));
  const json::object& usage = body.at("usage").as_object();
  EXPECT_EQ(usage.at("prompt_tokens"), 12);
  EXPECT_EQ(usage.at("completion_tokens"), 3);
  EXPECT_EQ(usage.at("total_tokens"), 15);
}

TEST(ResponsesTest, ChatCompletion) {
  const json::object body =
      ParseObject(CompletionJson(Meta(Endpoint::kChatCompletions), "Hi!", "stop", Usage{5, 2}));
  ExpectEnvelope(body, "chatcmpl-1", "chat.completion");
  const json::object& choice = body.at("choices").at(0).as_object();
  EXPECT_EQ(choice.at("index"), 0);
  EXPECT_EQ(choice.at("message"), (json::object{{"role", "assistant"}, {"content", "Hi!"}}));
  EXPECT_EQ(choice.at("finish_reason"), "stop");
  EXPECT_FALSE(choice.contains("text"));
  EXPECT_EQ(body.at("usage").at("total_tokens"), 7);
}

TEST(ResponsesTest, TotalTokensDoesNotOverflow) {
  const json::object body = ParseObject(
      CompletionJson(Meta(Endpoint::kCompletions), "", "stop", Usage{2147483647, 2147483647}));
  EXPECT_EQ(body.at("usage").at("total_tokens"), 4294967294LL);
}

TEST(ResponsesTest, CompletionStreamChunks) {
  const ResponseMeta meta = Meta(Endpoint::kCompletions);
  const json::object first = ParseObject(StreamChunkJson(meta, " alpha", true, std::nullopt));
  ExpectEnvelope(first, "cmpl-1", "text_completion");
  const json::object& choice = first.at("choices").at(0).as_object();
  EXPECT_EQ(choice.at("index"), 0);
  EXPECT_EQ(choice.at("text"), " alpha");
  EXPECT_TRUE(choice.at("logprobs").is_null());
  EXPECT_TRUE(choice.at("finish_reason").is_null());
  EXPECT_FALSE(choice.contains("delta"));
  EXPECT_TRUE(first.at("usage").is_null());
  const json::object last = ParseObject(StreamChunkJson(meta, "", false, "length"));
  EXPECT_EQ(last.at("choices").at(0).at("text"), "");
  EXPECT_EQ(last.at("choices").at(0).at("finish_reason"), "length");
}

TEST(ResponsesTest, ChatStreamChunks) {
  const ResponseMeta meta = Meta(Endpoint::kChatCompletions);
  const json::object first = ParseObject(StreamChunkJson(meta, " alpha", true, std::nullopt));
  ExpectEnvelope(first, "chatcmpl-1", "chat.completion.chunk");
  const json::object& choice = first.at("choices").at(0).as_object();
  EXPECT_EQ(choice.at("index"), 0);
  EXPECT_EQ(choice.at("delta"), (json::object{{"role", "assistant"}, {"content", " alpha"}}));
  EXPECT_TRUE(choice.at("finish_reason").is_null());
  EXPECT_FALSE(choice.contains("text"));
  const json::object middle = ParseObject(StreamChunkJson(meta, " bravo", false, std::nullopt));
  EXPECT_EQ(middle.at("choices").at(0).at("delta"), (json::object{{"content", " bravo"}}));
  const json::object last = ParseObject(StreamChunkJson(meta, "", false, "stop"));
  EXPECT_EQ(last.at("choices").at(0).at("delta"), json::object());
  EXPECT_EQ(last.at("choices").at(0).at("finish_reason"), "stop");
  // A first chunk without text still announces the role, with empty content (as OpenAI).
  const json::object empty_first = ParseObject(StreamChunkJson(meta, "", true, std::nullopt));
  EXPECT_EQ(empty_first.at("choices").at(0).at("delta"),
            (json::object{{"role", "assistant"}, {"content", ""}}));
}

TEST(ResponsesTest, UsageChunkHasEmptyChoices) {
  for (const Endpoint endpoint : {Endpoint::kCompletions, Endpoint::kChatCompletions}) {
    const json::object body = ParseObject(UsageChunkJson(Meta(endpoint), Usage{10, 4}));
    EXPECT_EQ(body.at("object"),
              endpoint == Endpoint::kChatCompletions ? "chat.completion.chunk" : "text_completion");
    EXPECT_TRUE(body.at("choices").as_array().empty());
    EXPECT_EQ(
        body.at("usage"),
        (json::object{{"prompt_tokens", 10}, {"completion_tokens", 4}, {"total_tokens", 14}}));
  }
}

TEST(ResponsesTest, ErrorJsonRendersEmptyParamAndCodeAsNull) {
  ApiError error;
  error.message = "'n' must be 1, got 3";
  error.param = "n";
  error.code = "n_not_supported";
  const json::object body = ParseObject(ErrorJson(error));
  ASSERT_EQ(body.size(), 1u);
  EXPECT_EQ(body.at("error"), (json::object{{"message", "'n' must be 1, got 3"},
                                            {"type", "invalid_request_error"},
                                            {"param", "n"},
                                            {"code", "n_not_supported"}}));
  ApiError bare;
  bare.message = "overloaded";
  bare.type = "server_error";
  const json::object bare_body = ParseObject(ErrorJson(bare));
  EXPECT_TRUE(bare_body.at("error").at("param").is_null());
  EXPECT_TRUE(bare_body.at("error").at("code").is_null());
  EXPECT_EQ(bare_body.at("error").at("type"), "server_error");
}

TEST(ResponsesTest, ModelsJson) {
  const json::object body =
      ParseObject(ModelsJson("seed-7b", 1700000000, "emulated:seed-a100-7b", true, 4096));
  EXPECT_EQ(body.at("object"), "list");
  ASSERT_EQ(body.at("data").as_array().size(), 1u);
  const json::object& model = body.at("data").at(0).as_object();
  EXPECT_EQ(model.at("id"), "seed-7b");
  EXPECT_EQ(model.at("object"), "model");
  EXPECT_EQ(model.at("created"), 1700000000);
  EXPECT_EQ(model.at("owned_by"), "spillway");
  EXPECT_EQ(model.at("max_model_len"), 4096);
  const json::object& spillway = model.at("spillway").as_object();
  EXPECT_EQ(spillway.at("executor"), "emulated:seed-a100-7b");
  EXPECT_EQ(spillway.at("emulated"), true);
  const std::string note(spillway.at("note").as_string());
  EXPECT_NE(note.find("cost model"), std::string::npos);
  EXPECT_NE(note.find("placeholder"), std::string::npos);
  const json::object real = ParseObject(ModelsJson("m", 0, "vllm", false, 8192));
  EXPECT_EQ(real.at("data").at(0).at("spillway").at("emulated"), false);
  const std::string real_note(real.at("data").at(0).at("spillway").at("note").as_string());
  EXPECT_EQ(real_note.find("placeholder"), std::string::npos);
}

TEST(ResponsesTest, SseFraming) {
  EXPECT_EQ(SseData(R"({"a":1})"), "data: {\"a\":1}\n\n");
  EXPECT_EQ(SseData(""), "data: \n\n");
  EXPECT_EQ(kSseDone, "data: [DONE]\n\n");
  const std::string chunk =
      StreamChunkJson(Meta(Endpoint::kChatCompletions), "a\nb\r\n", true, std::nullopt);
  EXPECT_EQ(chunk.find('\n'), std::string::npos);  // newlines in text are escaped: one line
  const std::string frame = SseData(chunk);
  ASSERT_TRUE(frame.starts_with("data: "));
  ASSERT_TRUE(frame.ends_with("\n\n"));
  ParseObject(frame.substr(6, frame.size() - 8));
}

}  // namespace
}  // namespace spillway::api
