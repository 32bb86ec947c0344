// The generation and streaming parameters shared by /v1/completions and /v1/chat/completions
// (OpenAI API reference request bodies; ignore_eos from vLLM): types, ranges, defaults.

#include <string>

#include <gtest/gtest.h>

#include "api/parse_test_util.h"
#include "api/request_parser.h"

namespace spillway::api {
namespace {

using testing_util::ChatBody;
using testing_util::CompletionBody;
using testing_util::ParseError;
using testing_util::ParseOk;
using testing_util::Rejected;

using testing_util::kChat;
using testing_util::kCmpl;

TEST(RequestFieldsTest, DefaultsWhenAbsent) {
  const CompletionRequest r = ParseOk(R"({"prompt": "x"})");
  EXPECT_EQ(r.model, "");
  EXPECT_FALSE(r.max_tokens.has_value());
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.include_usage);
  EXPECT_TRUE(r.stop.empty());
  EXPECT_FALSE(r.seed.has_value());
  EXPECT_EQ(r.temperature, 1.0);
  EXPECT_EQ(r.top_p, 1.0);
  EXPECT_FALSE(r.ignore_eos);
  EXPECT_EQ(r.user, "");
}

TEST(RequestFieldsTest, AllFieldsRead) {
  const CompletionRequest r = ParseOk(CompletionBody(
      R"("max_tokens": 16, "stream": true, "stream_options": {"include_usage": true},
         "stop": ["\n", "END"], "seed": -42, "temperature": 0, "top_p": 0.5, "n": 1,
         "ignore_eos": true, "user": "u-1")"));
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(r.max_tokens, 16);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"\n", "END"}));
  EXPECT_EQ(r.seed, -42);
  EXPECT_EQ(r.temperature, 0.0);
  EXPECT_EQ(r.top_p, 0.5);
  EXPECT_TRUE(r.ignore_eos);
  EXPECT_EQ(r.user, "u-1");
}

TEST(RequestFieldsTest, NullMeansAbsent) {
  const CompletionRequest r = ParseOk(CompletionBody(
      R"("model": null, "max_tokens": null, "stream": null, "stream_options": null,
         "stop": null, "seed": null, "temperature": null, "top_p": null, "n": null,
         "ignore_eos": null, "user": null)"));
  EXPECT_FALSE(r.max_tokens.has_value());
  EXPECT_EQ(r.temperature, 1.0);
}

TEST(RequestFieldsTest, UnknownFieldsAreIgnored) {
  const CompletionRequest r =
      ParseOk(CompletionBody(R"("logprobs": 3, "echo": "yes", "frobnicate": {"a": [1, 2]})"));
  EXPECT_EQ(r.prompt_text, "Hello");
}

TEST(RequestFieldsTest, MaxTokensMustBeAPositiveInt32) {
  EXPECT_EQ(ParseOk(CompletionBody(R"("max_tokens": 1)")).max_tokens, 1);
  EXPECT_EQ(ParseOk(CompletionBody(R"("max_tokens": 2147483647)")).max_tokens, 2147483647);
  EXPECT_EQ(ParseOk(CompletionBody(R"("max_tokens": 5.0)")).max_tokens, 5);
  EXPECT_EQ(ParseOk(CompletionBody(R"("max_tokens": 5e1)")).max_tokens, 50);
  for (const char* value :
       {"0", "-5", "2147483648", "18446744073709551615", "1e23", "1e400", "-1e400"}) {
    EXPECT_TRUE(Rejected(CompletionBody(std::string(R"("max_tokens": )") + value), kCmpl,
                         "max_tokens", "invalid_value"))
        << value;
  }
  for (const char* value : {"5.5", "\"5\"", "true", "[5]", "{}"}) {
    EXPECT_TRUE(Rejected(CompletionBody(std::string(R"("max_tokens": )") + value), kCmpl,
                         "max_tokens", "invalid_type"))
        << value;
  }
}

TEST(RequestFieldsTest, MaxTokensMessagesSayWhatWasGot) {
  EXPECT_EQ(ParseError(CompletionBody(R"("max_tokens": -5)")).message,
            "'max_tokens' must be an integer >= 1, got -5");
  EXPECT_EQ(ParseError(CompletionBody(R"("max_tokens": 2147483648)")).message,
            "'max_tokens' must be an integer <= 2147483647, got 2147483648");
  EXPECT_EQ(ParseError(CompletionBody(R"("max_tokens": 5.5)")).message,
            "'max_tokens' must be an integer in [1, 2147483647], got 5.5");
  EXPECT_EQ(ParseError(CompletionBody(R"("max_tokens": "ten")")).message,
            "'max_tokens' must be an integer in [1, 2147483647], got \"ten\"");
}

TEST(RequestFieldsTest, MaxCompletionTokensOnChatWinsOverMaxTokens) {
  EXPECT_EQ(ParseOk(ChatBody(R"("max_completion_tokens": 7)"), kChat).max_tokens, 7);
  EXPECT_EQ(ParseOk(ChatBody(R"("max_tokens": 9, "max_completion_tokens": 7)"), kChat).max_tokens,
            7);
  EXPECT_EQ(
      ParseOk(ChatBody(R"("max_tokens": 9, "max_completion_tokens": null)"), kChat).max_tokens, 9);
  EXPECT_TRUE(Rejected(ChatBody(R"("max_completion_tokens": 0)"), kChat, "max_completion_tokens",
                       "invalid_value"));
  EXPECT_TRUE(Rejected(ChatBody(R"("max_completion_tokens": "7")"), kChat, "max_completion_tokens",
                       "invalid_type"));
  // Both are validated even though one wins.
  EXPECT_TRUE(Rejected(ChatBody(R"("max_tokens": -1, "max_completion_tokens": 7)"), kChat,
                       "max_tokens", "invalid_value"));
}

TEST(RequestFieldsTest, MaxCompletionTokensIsNotACompletionsParameter) {
  // /v1/completions has no max_completion_tokens: like any unknown field it is ignored.
  EXPECT_FALSE(ParseOk(CompletionBody(R"("max_completion_tokens": 7)")).max_tokens.has_value());
}

TEST(RequestFieldsTest, NMustBeOne) {
  EXPECT_TRUE(ParseCompletionRequest(CompletionBody(R"("n": 1.0)"), kCmpl).has_value());
  for (const char* value : {"2", "0", "-1", "100"}) {
    EXPECT_TRUE(
        Rejected(CompletionBody(std::string(R"("n": )") + value), kCmpl, "n", "n_not_supported"));
    EXPECT_TRUE(Rejected(ChatBody(std::string(R"("n": )") + value), kChat, "n", "n_not_supported"));
  }
  EXPECT_TRUE(Rejected(CompletionBody(R"("n": "1")"), kCmpl, "n", "invalid_type"));
  EXPECT_TRUE(Rejected(CompletionBody(R"("n": 1.5)"), kCmpl, "n", "invalid_type"));
  EXPECT_EQ(ParseError(CompletionBody(R"("n": 3)")).message,
            "'n' must be 1 (one choice per request), got 3");
}

TEST(RequestFieldsTest, TemperatureInZeroToTwo) {
  EXPECT_EQ(ParseOk(CompletionBody(R"("temperature": 2)")).temperature, 2.0);
  EXPECT_EQ(ParseOk(CompletionBody(R"("temperature": 0.7)")).temperature, 0.7);
  for (const char* value : {"-0.01", "2.0001", "1e400", "-1e400"}) {
    EXPECT_TRUE(Rejected(CompletionBody(std::string(R"("temperature": )") + value), kCmpl,
                         "temperature", "invalid_value"))
        << value;
  }
  EXPECT_TRUE(
      Rejected(CompletionBody(R"("temperature": "hot")"), kCmpl, "temperature", "invalid_type"));
  EXPECT_EQ(ParseError(CompletionBody(R"("temperature": 3)")).message,
            "'temperature' must be a number in [0, 2], got 3");
}

TEST(RequestFieldsTest, TopPInZeroExclusiveToOne) {
  EXPECT_EQ(ParseOk(CompletionBody(R"("top_p": 1)")).top_p, 1.0);
  EXPECT_EQ(ParseOk(CompletionBody(R"("top_p": 1e-9)")).top_p, 1e-9);
  for (const char* value : {"0", "-0.5", "1.01", "1e400"}) {
    EXPECT_TRUE(Rejected(CompletionBody(std::string(R"("top_p": )") + value), kCmpl, "top_p",
                         "invalid_value"))
        << value;
  }
  EXPECT_TRUE(Rejected(CompletionBody(R"("top_p": [0.5])"), kCmpl, "top_p", "invalid_type"));
}

TEST(RequestFieldsTest, SeedIsAnInt64) {
  EXPECT_EQ(ParseOk(CompletionBody(R"("seed": 9223372036854775807)")).seed, 9223372036854775807LL);
  EXPECT_EQ(ParseOk(CompletionBody(R"("seed": -9223372036854775808)")).seed,
            std::numeric_limits<std::int64_t>::min());
  EXPECT_TRUE(
      Rejected(CompletionBody(R"("seed": 9223372036854775808)"), kCmpl, "seed", "invalid_value"));
  EXPECT_TRUE(Rejected(CompletionBody(R"("seed": 1.5)"), kCmpl, "seed", "invalid_type"));
  EXPECT_TRUE(Rejected(CompletionBody(R"("seed": "7")"), kCmpl, "seed", "invalid_type"));
}

TEST(RequestFieldsTest, StopStringOrArray) {
  EXPECT_EQ(ParseOk(CompletionBody(R"("stop": "###")")).stop, std::vector<std::string>{"###"});
  EXPECT_TRUE(ParseOk(CompletionBody(R"("stop": [])")).stop.empty());
  EXPECT_EQ(ParseOk(CompletionBody(R"("stop": ["a", "b", "c", "d"])")).stop.size(), 4u);
  EXPECT_TRUE(Rejected(CompletionBody(R"("stop": 5)"), kCmpl, "stop", "invalid_type"));
  EXPECT_TRUE(Rejected(CompletionBody(R"("stop": ["a", 5])"), kCmpl, "stop", "invalid_type"));
  EXPECT_TRUE(Rejected(CompletionBody(R"("stop": {"a": 1})"), kCmpl, "stop", "invalid_type"));
  EXPECT_TRUE(Rejected(CompletionBody(R"("stop": ["a", "b", "c", "d", "e"])"), kCmpl, "stop",
                       "invalid_value"));
  EXPECT_TRUE(Rejected(CompletionBody(R"("stop": "")"), kCmpl, "stop", "invalid_value"));
  EXPECT_TRUE(Rejected(CompletionBody(R"("stop": ["a", ""])"), kCmpl, "stop", "invalid_value"));
}

TEST(RequestFieldsTest, StopLimitsComeFromRequestLimits) {
  RequestLimits limits;
  limits.max_stop_sequences = 1;
  limits.max_stop_bytes = 4;
  EXPECT_EQ(ParseOk(CompletionBody(R"("stop": ["abcd"])"), kCmpl, limits).stop.size(), 1u);
  // "é" is 2 UTF-8 bytes: "ééé" is 6 bytes, over the 4-byte limit.
  EXPECT_TRUE(Rejected(CompletionBody(R"("stop": "ééé")"), kCmpl, "stop", "invalid_value", limits));
  EXPECT_TRUE(
      Rejected(CompletionBody(R"("stop": ["a", "b"])"), kCmpl, "stop", "invalid_value", limits));
}

TEST(RequestFieldsTest, StreamAndStreamOptions) {
  EXPECT_TRUE(ParseOk(CompletionBody(R"("stream": true)")).stream);
  EXPECT_FALSE(ParseOk(CompletionBody(R"("stream": true, "stream_options": {})")).include_usage);
  EXPECT_TRUE(
      ParseOk(ChatBody(R"("stream": true, "stream_options": {"include_usage": true})"), kChat)
          .include_usage);
  EXPECT_TRUE(Rejected(CompletionBody(R"("stream": "true")"), kCmpl, "stream", "invalid_type"));
  EXPECT_TRUE(Rejected(CompletionBody(R"("stream": 1)"), kCmpl, "stream", "invalid_type"));
  EXPECT_TRUE(Rejected(CompletionBody(R"("stream": true, "stream_options": true)"), kCmpl,
                       "stream_options", "invalid_type"));
  EXPECT_TRUE(Rejected(CompletionBody(R"("stream": true, "stream_options": {"include_usage": 1})"),
                       kCmpl, "stream_options.include_usage", "invalid_type"));
}

TEST(RequestFieldsTest, StreamOptionsRequireStream) {
  // OpenAI: "The 'stream_options' parameter is only allowed when 'stream' is enabled."
  EXPECT_TRUE(Rejected(CompletionBody(R"("stream_options": {"include_usage": true})"), kCmpl,
                       "stream_options", "invalid_value"));
  EXPECT_TRUE(Rejected(ChatBody(R"("stream": false, "stream_options": {})"), kChat,
                       "stream_options", "invalid_value"));
}

TEST(RequestFieldsTest, StringAndBooleanFields) {
  EXPECT_EQ(ParseOk(CompletionBody(R"("model": "")")).model, "");
  EXPECT_TRUE(Rejected(CompletionBody(R"("model": 3)"), kCmpl, "model", "invalid_type"));
  EXPECT_TRUE(Rejected(CompletionBody(R"("user": ["u"])"), kCmpl, "user", "invalid_type"));
  EXPECT_TRUE(
      Rejected(CompletionBody(R"("ignore_eos": "yes")"), kCmpl, "ignore_eos", "invalid_type"));
  EXPECT_EQ(ParseError(CompletionBody(R"("stream": "yes")")).message,
            "'stream' must be a boolean, got \"yes\"");
}

}  // namespace
}  // namespace spillway::api
