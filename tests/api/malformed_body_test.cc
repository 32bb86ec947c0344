// Bodies that are not acceptable JSON objects: syntax errors, invalid UTF-8, deep nesting,
// non-standard numbers. All must come back as a 400, never a throw or a crash.

#include <string>

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "api/parse_test_util.h"
#include "api/request_parser.h"
#include "api/responses.h"

namespace spillway::api {
namespace {

using testing_util::CompletionBody;
using testing_util::ParseError;
using testing_util::ParseOk;
using testing_util::Rejected;

using testing_util::kChat;
using testing_util::kCmpl;

TEST(MalformedBodyTest, SyntaxErrors) {
  for (const char* body : {"", " ", "{", "}", R"({"prompt": "x",})", R"({"prompt": 'x'})",
                           R"({prompt: "x"})", R"({"prompt": "x"} {})", R"({"prompt": "x"}])",
                           "{\"prompt\": \"x\" /* c */}", "\xef\xbb\xbf{\"prompt\": \"x\"}"}) {
    EXPECT_TRUE(Rejected(body, kCmpl, "", "invalid_json")) << body;
  }
  EXPECT_TRUE(ParseError("{").message.starts_with("We could not parse the JSON body"));
}

TEST(MalformedBodyTest, BodyMustBeAnObject) {
  for (const char* body : {"[]", R"(["prompt", "x"])", "\"x\"", "1", "null", "true"}) {
    EXPECT_TRUE(Rejected(body, kCmpl, "", "invalid_type")) << body;
    EXPECT_TRUE(Rejected(body, kChat, "", "invalid_type")) << body;
  }
  EXPECT_EQ(ParseError("[1, 2]").message, "'body' must be a JSON object, got [1,2]");
}

TEST(MalformedBodyTest, InvalidUtf8IsRejectedByBoostJson) {
  for (const std::string bad :
       {"\xff", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "a\x80z"}) {
    EXPECT_TRUE(Rejected(R"({"prompt": ")" + bad + "\"}", kCmpl, "", "invalid_json"));
    EXPECT_TRUE(Rejected(CompletionBody("\"" + bad + "\": 1"), kCmpl, "", "invalid_json"));
    EXPECT_TRUE(Rejected(R"({"messages": [{"role": "user", "content": ")" + bad + "\"}]}", kChat,
                         "", "invalid_json"));
  }
  // Lone UTF-16 surrogates in escapes cannot become valid UTF-8 either.
  EXPECT_TRUE(Rejected(R"({"prompt": "\ud800"})", kCmpl, "", "invalid_json"));
  EXPECT_TRUE(Rejected(R"({"prompt": "\udc00x"})", kCmpl, "", "invalid_json"));
  // Valid multibyte UTF-8 and escaped pairs are fine.
  EXPECT_EQ(ParseOk(R"({"prompt": "h\u00e9llo \ud83d\ude00 \u4e16"})").prompt_text,
            "h\xc3\xa9llo \xf0\x9f\x98\x80 \xe4\xb8\x96");
}

TEST(MalformedBodyTest, DeepNestingIsAnErrorNotACrash) {
  const std::string deep_array = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_TRUE(Rejected(deep_array, kCmpl, "", "invalid_json"));
  std::string deep_field = R"({"prompt": "x", "extra": )";
  for (int i = 0; i < 65; ++i) {
    deep_field += R"({"a": )";
  }
  deep_field += "1" + std::string(65, '}') + "}";
  EXPECT_TRUE(Rejected(deep_field, kCmpl, "", "invalid_json"));
  // 60 levels of unknown nesting are within the limit and ignored.
  std::string ok =
      R"({"prompt": "x", "extra": )" + std::string(60, '[') + std::string(60, ']') + "}";
  EXPECT_EQ(ParseOk(ok).prompt_text, "x");
}

TEST(MalformedBodyTest, NonStandardNumbersAreSyntaxErrors) {
  for (const char* value :
       {"NaN", "nan", "Infinity", "-Infinity", "+1", "01", "1.", ".5", "0x10", "1e", "--1"}) {
    EXPECT_TRUE(Rejected(CompletionBody(std::string(R"("temperature": )") + value), kCmpl, "",
                         "invalid_json"))
        << value;
  }
}

TEST(MalformedBodyTest, HugeNumbers) {
  // Boost.JSON turns 1e400 into infinity and 1e-400 into 0; neither may slip through.
  EXPECT_TRUE(
      Rejected(CompletionBody(R"("temperature": 1e400)"), kCmpl, "temperature", "invalid_value"));
  EXPECT_EQ(ParseOk(CompletionBody(R"("temperature": 1e-400)")).temperature, 0.0);
  EXPECT_TRUE(Rejected(CompletionBody(R"("top_p": 1e-400)"), kCmpl, "top_p", "invalid_value"));
  const std::string digits(5000, '9');
  EXPECT_TRUE(
      Rejected(CompletionBody(R"("max_tokens": )" + digits), kCmpl, "max_tokens", "invalid_value"));
  EXPECT_TRUE(Rejected(CompletionBody(R"("seed": -)" + digits), kCmpl, "seed", "invalid_value"));
  EXPECT_EQ(ParseError(CompletionBody(R"("max_tokens": 1e400)")).message,
            "'max_tokens' must be an integer <= 2147483647, got a number too large for a double");
}

TEST(MalformedBodyTest, DuplicateKeysLastWins) {
  EXPECT_EQ(ParseOk(R"({"prompt": "a", "prompt": "b"})").prompt_text, "b");
  EXPECT_TRUE(Rejected(R"({"max_tokens": 5, "prompt": "a", "max_tokens": -1})", kCmpl, "max_tokens",
                       "invalid_value"));
}

TEST(MalformedBodyTest, ErrorMessagesStayValidUtf8WhenTruncated) {
  // A long multibyte string rendered in a message is cut at a character boundary, so the
  // error body is still valid JSON.
  std::string euros;
  for (int i = 0; i < 100; ++i) {
    euros += "\xe2\x82\xac";
  }
  for (int shift = 0; shift < 3; ++shift) {
    const std::string value = std::string(static_cast<std::size_t>(shift), 'a') + euros;
    const ApiError error = ParseError(CompletionBody(R"("max_tokens": ")" + value + "\""));
    EXPECT_EQ(error.param, "max_tokens");
    EXPECT_TRUE(error.message.ends_with("..."));
    boost::json::error_code ec;
    boost::json::parse(ErrorJson(error), ec);
    EXPECT_FALSE(ec) << error.message;
  }
}

TEST(MalformedBodyTest, EmbeddedNulAndControlEscapes) {
  const std::string body = std::string(R"({"prompt": "a\u0000b\n"})");
  EXPECT_EQ(ParseOk(body).prompt_text, std::string("a\0b\n", 4));
  // A raw control character (here NUL) inside a string must be escaped in JSON.
  const std::string raw_nul = std::string(R"({"prompt": "a)") + '\0' + "b\"}";
  EXPECT_TRUE(Rejected(raw_nul, kCmpl, "", "invalid_json"));
}

}  // namespace
}  // namespace spillway::api
