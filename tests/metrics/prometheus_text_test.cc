#include "metrics/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>

namespace spillway::metrics {
namespace {

TEST(PrometheusTextTest, ReadsNamesLabelsValuesAndSkipsComments) {
  const Exposition e = ParseExposition(
      "# HELP vllm:num_requests_waiting Requests waiting.\n"
      "# TYPE vllm:num_requests_waiting gauge\n"
      "vllm:num_requests_waiting{model_name=\"m\",engine=\"0\"} 3.0\n"
      "vllm:num_requests_waiting{model_name=\"m\",engine=\"1\"} 4\n"
      "plain 1e3 1712345678000\n"
      "  indented_ok 2\r\n"
      "\n"
      "# a comment\n");
  ASSERT_EQ(e.samples.size(), 4u);
  EXPECT_EQ(e.malformed_lines, 0);
  EXPECT_EQ(e.samples[0].name, "vllm:num_requests_waiting");
  ASSERT_NE(e.samples[1].Label("engine"), nullptr);
  EXPECT_EQ(*e.samples[1].Label("engine"), "1");
  EXPECT_EQ(e.samples[1].Label("missing"), nullptr);
  EXPECT_EQ(e.Sum("vllm:num_requests_waiting"), 7.0);
  EXPECT_EQ(e.Mean("vllm:num_requests_waiting"), 3.5);
  EXPECT_EQ(e.Sum("plain"), 1000.0) << "the timestamp is not the value";
  EXPECT_EQ(e.Sum("indented_ok"), 2.0);
  EXPECT_FALSE(e.Sum("absent").has_value());
  EXPECT_TRUE(e.HasPrefix("vllm:"));
  EXPECT_FALSE(e.HasPrefix("sglang:"));
}

TEST(PrometheusTextTest, UnescapesLabelValuesHoldingBracesCommasAndQuotes) {
  const Exposition e =
      ParseExposition("m{path=\"/a,b}\",q=\"say \\\"hi\\\"\",nl=\"x\\ny\",bs=\"c:\\\\d\",} 5\n");
  ASSERT_EQ(e.samples.size(), 1u);
  const Sample& s = e.samples[0];
  EXPECT_EQ(*s.Label("path"), "/a,b}");
  EXPECT_EQ(*s.Label("q"), "say \"hi\"");
  EXPECT_EQ(*s.Label("nl"), "x\ny");
  EXPECT_EQ(*s.Label("bs"), "c:\\d");
  EXPECT_EQ(s.value, 5.0);
}

TEST(PrometheusTextTest, SpecialValues) {
  const Exposition e =
      ParseExposition("a NaN\nb +Inf\nc -Inf\nd Inf\ne -0.5\nf +2\nh_bucket{le=\"+Inf\"} 9\n");
  ASSERT_EQ(e.samples.size(), 7u);
  EXPECT_TRUE(std::isnan(e.samples[0].value));
  EXPECT_EQ(e.samples[1].value, INFINITY);
  EXPECT_EQ(e.samples[2].value, -INFINITY);
  EXPECT_EQ(e.samples[3].value, INFINITY);
  EXPECT_EQ(e.samples[4].value, -0.5);
  EXPECT_EQ(e.samples[5].value, 2.0);
  EXPECT_EQ(*e.samples[6].Label("le"), "+Inf");
}

TEST(PrometheusTextTest, MalformedLinesAreCountedAndSkipped) {
  const Exposition e = ParseExposition(
      "good 1\n"
      "9starts_with_digit 1\n"
      "no_value\n"
      "bad_value abc\n"
      "open{l=\"v\" 1\n"
      "unterminated{l=\"v} 1\n"
      "nolabelvalue{l=} 1\n"
      "also_good{} 2\n");
  EXPECT_EQ(e.malformed_lines, 6);
  EXPECT_EQ(e.Sum("good"), 1.0);
  EXPECT_EQ(e.Sum("also_good"), 2.0);
}

TEST(PrometheusTextTest, OpenMetricsEofEndsTheExposition) {
  const Exposition e = ParseExposition("a 1\n# EOF\nb 2\n");
  EXPECT_TRUE(e.Has("a"));
  EXPECT_FALSE(e.Has("b"));
}

}  // namespace
}  // namespace spillway::metrics
