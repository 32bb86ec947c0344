// SseParser: events from a byte stream cut at arbitrary points.

#include "loadgen/sse_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace spillway::loadgen {
namespace {

std::vector<SseEvent> ParseAll(const std::string& text) {
  SseParser p;
  std::vector<SseEvent> out;
  p.Feed(text, &out);
  return out;
}

TEST(SseParserTest, OneEventPerBlankLine) {
  const auto events = ParseAll("data: {\"a\":1}\n\ndata: [DONE]\n\n");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data, "{\"a\":1}");
  EXPECT_EQ(events[1].data, "[DONE]");
  EXPECT_EQ(events[0].event, "");
}

TEST(SseParserTest, EveryLineEndingIsAccepted) {
  const auto events = ParseAll("data: a\r\n\r\ndata: b\r\rdata: c\n\n");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].data, "a");
  EXPECT_EQ(events[1].data, "b");
  EXPECT_EQ(events[2].data, "c");
}

TEST(SseParserTest, SplitAnywhereGivesTheSameEvents) {
  const std::string text =
      ": comment\r\nevent: error\r\ndata: line one\r\ndata:line two\r\n\r\ndata: x\n\n";
  for (std::size_t cut = 0; cut <= text.size(); ++cut) {
    SseParser p;
    std::vector<SseEvent> out;
    p.Feed(text.substr(0, cut), &out);
    p.Feed(text.substr(cut), &out);
    ASSERT_EQ(out.size(), 2u) << "cut at " << cut;
    EXPECT_EQ(out[0].event, "error");
    EXPECT_EQ(out[0].data, "line one\nline two") << "cut at " << cut;
    EXPECT_EQ(out[1].data, "x");
    EXPECT_EQ(out[1].event, "");
  }
}

TEST(SseParserTest, ByteByByte) {
  const std::string text = "data: {\"x\":\"y\"}\r\n\r\n";
  SseParser p;
  std::vector<SseEvent> out;
  for (const char c : text) {
    p.Feed(std::string(1, c), &out);
  }
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "{\"x\":\"y\"}");
}

TEST(SseParserTest, CommentsAndUnknownFieldsAreIgnoredAndEmptyEventsNotDispatched) {
  const auto events = ParseAll(": keep-alive\n\nid: 7\nretry: 100\n\nevent: ping\n\ndata\n\n");
  ASSERT_EQ(events.size(), 1u);  // only "data" (a field with no colon) carries data: ""
  EXPECT_EQ(events[0].data, "");
}

TEST(SseParserTest, AnIncompleteEventIsHeldBack) {
  SseParser p;
  std::vector<SseEvent> out;
  p.Feed("data: partial", &out);
  EXPECT_TRUE(out.empty());
  p.Feed("\n", &out);
  EXPECT_TRUE(out.empty());
  p.Feed("\n", &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "partial");
}

TEST(SseParserTest, AnOverlongLineIsDroppedAndFlagged) {
  SseParser p;
  std::vector<SseEvent> out;
  const std::string chunk(64 * 1024, 'x');
  p.Feed("data: ", &out);
  for (std::size_t i = 0; i <= SseParser::kMaxLineBytes / chunk.size(); ++i) {
    p.Feed(chunk, &out);
  }
  p.Feed("\n\ndata: ok\n\n", &out);
  EXPECT_TRUE(p.overflowed());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "ok");
}

}  // namespace
}  // namespace spillway::loadgen
