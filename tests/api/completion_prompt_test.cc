// The /v1/completions `prompt` shapes (OpenAI API reference, "Create completion": string,
// array of strings, array of tokens, array of token arrays), restricted to one prompt.

#include <string>

#include <gtest/gtest.h>

#include "api/parse_test_util.h"
#include "api/request_parser.h"

namespace spillway::api {
namespace {

using testing_util::ParseError;
using testing_util::ParseOk;
using testing_util::Rejected;

using testing_util::kCmpl;

TEST(CompletionPromptTest, StringPrompt) {
  const CompletionRequest r = ParseOk(R"({"model": "m", "prompt": "Once upon a time"})");
  EXPECT_EQ(r.endpoint, Endpoint::kCompletions);
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(r.prompt_text, "Once upon a time");
  EXPECT_TRUE(r.prompt_token_ids.empty());
  EXPECT_TRUE(r.messages.empty());
}

TEST(CompletionPromptTest, TokenIdList) {
  const CompletionRequest r = ParseOk(R"({"prompt": [0, 1, 2147483647, 5.0]})");
  EXPECT_EQ(r.prompt_token_ids, (std::vector<std::int32_t>{0, 1, 2147483647, 5}));
  EXPECT_TRUE(r.prompt_text.empty());
}

TEST(CompletionPromptTest, ListWithOneStringOrOneTokenList) {
  EXPECT_EQ(ParseOk(R"({"prompt": ["only one"]})").prompt_text, "only one");
  EXPECT_EQ(ParseOk(R"({"prompt": [[7, 8, 9]]})").prompt_token_ids,
            (std::vector<std::int32_t>{7, 8, 9}));
}

TEST(CompletionPromptTest, SeveralPromptsAreABatch) {
  EXPECT_TRUE(Rejected(R"({"prompt": ["a", "b"]})", kCmpl, "prompt", "batch_not_supported"));
  EXPECT_TRUE(Rejected(R"({"prompt": [[1], [2]]})", kCmpl, "prompt", "batch_not_supported"));
  EXPECT_EQ(ParseError(R"({"prompt": ["a", "b", "c"]})").message,
            "'prompt' holds 3 prompts; batches are not supported, send one prompt per request");
}

TEST(CompletionPromptTest, MissingOrNullPrompt) {
  EXPECT_TRUE(Rejected(R"({"model": "m"})", kCmpl, "prompt", "missing_required_parameter"));
  EXPECT_TRUE(Rejected(R"({"prompt": null})", kCmpl, "prompt", "missing_required_parameter"));
  EXPECT_EQ(ParseError(R"({})").message, "Missing required parameter: 'prompt'.");
}

TEST(CompletionPromptTest, EmptyPromptsAreRejected) {
  for (const char* body :
       {R"({"prompt": ""})", R"({"prompt": []})", R"({"prompt": [""]})", R"({"prompt": [[]]})"}) {
    EXPECT_TRUE(Rejected(body, kCmpl, "prompt", "invalid_value"));
  }
}

TEST(CompletionPromptTest, WrongShapes) {
  for (const char* body :
       {R"({"prompt": 5})", R"({"prompt": true})", R"({"prompt": {}})", R"({"prompt": [[1, "a"]]})",
        R"({"prompt": [1, "a"]})", R"({"prompt": [1, [2]]})", R"({"prompt": [1.5]})",
        R"({"prompt": [[["x"]]]})"}) {
    EXPECT_TRUE(Rejected(body, kCmpl, "prompt", "invalid_type"));
  }
}

TEST(CompletionPromptTest, TokenIdsOutsideInt32Range) {
  for (const char* body : {R"({"prompt": [-1]})", R"({"prompt": [2147483648]})",
                           R"({"prompt": [1, 18446744073709551615]})", R"({"prompt": [1e300]})",
                           R"({"prompt": [[3, -7]]})"}) {
    EXPECT_TRUE(Rejected(body, kCmpl, "prompt", "invalid_value"));
  }
  EXPECT_EQ(ParseError(R"({"prompt": [4, 5, -1]})").message,
            "'prompt' must be token ids that are integers in [0, 2147483647], got -1 at index 2");
}

TEST(CompletionPromptTest, TokenIdCountLimit) {
  RequestLimits limits;
  limits.max_prompt_token_ids = 3;
  EXPECT_EQ(ParseOk(R"({"prompt": [1, 2, 3]})", kCmpl, limits).prompt_token_ids.size(), 3u);
  EXPECT_TRUE(Rejected(R"({"prompt": [1, 2, 3, 4]})", kCmpl, "prompt", "invalid_value", limits));
  EXPECT_TRUE(Rejected(R"({"prompt": [[1, 2, 3, 4]]})", kCmpl, "prompt", "invalid_value", limits));
}

TEST(CompletionPromptTest, ChatFieldsAreIgnoredOnCompletions) {
  const CompletionRequest r = ParseOk(R"({"prompt": "x", "messages": 5})");
  EXPECT_TRUE(r.messages.empty());
}

}  // namespace
}  // namespace spillway::api
