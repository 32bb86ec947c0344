// A prompt whose prefill alone would end after the request deadline, even on an idle engine,
// gets 400 max_tokens_exceeds_deadline with param `prompt` at the door (found by a new user:
// a 120,000-token prompt on the 128k profile with the default 4.5 s deadline was admitted and
// answered 504 request_timeout 4.5 s later, every time).

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"

namespace spillway {
namespace {

using server_test::HttpResponse;
using server_test::IsOpenAiError;
using server_test::ParseJson;
using server_test::StringAt;

class LongPromptDeadlineTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    return {"--profile", "h100-llama3.1-8b-128k", "--request-timeout-s",
            "4.5",       "--max-body-bytes",      "4194304"};
  }
};

TEST_F(LongPromptDeadlineTest, APromptWhosePrefillAlonePassesTheDeadlineGets400AtTheDoor) {
  std::string prompt;
  for (int i = 0; i < 120000; ++i) {
    prompt += (i == 0 ? "" : ",") + std::to_string(1 + i % 1000);
  }
  const HttpResponse r =
      client().Post("/v1/completions", R"({"prompt":[)" + prompt + R"(],"max_tokens":16})");
  EXPECT_TRUE(IsOpenAiError(r, 400, "max_tokens_exceeds_deadline")) << r.status << " " << r.body;
  EXPECT_FALSE(r.Header("Retry-After").has_value());
  const std::optional<boost::json::value> v = ParseJson(r.body);
  ASSERT_TRUE(v.has_value()) << r.body;
  EXPECT_EQ(StringAt(*v, "/error/param"), "prompt");
  EXPECT_NE(StringAt(*v, "/error/message").value_or("").find("shorten the prompt"),
            std::string::npos);
  ExpectNormalCompletionSucceeds();
}

}  // namespace
}  // namespace spillway
