// The usage an endpoint's answer reports (gateway/usage_scan.h), read to correct a tenant's
// token reservation: a JSON body's, and a stream's last `data:` line's, split anywhere.

#include "gateway/usage_scan.h"

#include <gtest/gtest.h>

namespace spillway::gateway {
namespace {

TEST(UsageScanTest, ReadsTotalElsePromptPlusCompletion) {
  EXPECT_EQ(UsageTokens(R"({"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}})"),
            7);
  EXPECT_EQ(UsageTokens(R"({"usage":{"prompt_tokens":3,"completion_tokens":4}})"), 7);
  EXPECT_FALSE(UsageTokens(R"({"usage":null})").has_value());
  EXPECT_FALSE(UsageTokens(R"({"usage":{"total_tokens":-1}})").has_value());
  EXPECT_FALSE(UsageTokens(R"({"usage":{"total_tokens":"7"}})").has_value());
  EXPECT_FALSE(UsageTokens(R"({"choices":[]})").has_value());
  EXPECT_FALSE(UsageTokens("not json").has_value());
  EXPECT_FALSE(UsageTokens("[1,2]").has_value());
}

TEST(UsageScanTest, AStreamsUsageLineIsReadWhereverTheChunksSplitIt) {
  const std::string stream =
      "data: {\"choices\":[{\"text\":\"a\"}],\"usage\":null}\n\n"
      "data: {\"choices\":[{\"text\":\"b\"}]}\r\n\r\n"
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,"
      "\"total_tokens\":7}}\n\n"
      "data: [DONE]\n\n";
  for (std::size_t step = 1; step <= stream.size(); ++step) {
    StreamUsage usage;
    for (std::size_t at = 0; at < stream.size(); at += step) {
      usage.Feed(std::string_view(stream).substr(at, step));
    }
    EXPECT_EQ(usage.tokens(), 7) << "chunks of " << step;
  }
}

TEST(UsageScanTest, AStreamWithoutUsageReportsNone) {
  StreamUsage usage;
  usage.Feed("data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: [DONE]\n\n");
  EXPECT_FALSE(usage.tokens().has_value());
}

TEST(UsageScanTest, ALineOverTheLimitIsSkipped) {
  StreamUsage usage;
  usage.Feed("data: {\"usage\":{\"total_tokens\":1},\"x\":\"");
  usage.Feed(std::string(StreamUsage::kMaxLineBytes, 'x'));
  usage.Feed("\"}\n\ndata: {\"usage\":{\"total_tokens\":9}}\n");
  EXPECT_EQ(usage.tokens(), 9);
}

}  // namespace
}  // namespace spillway::gateway
