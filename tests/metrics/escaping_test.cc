// Escaping in the text format: label values escape \, " and line feed; HELP escapes \ and line
// feed only.

#include <string>

#include <gtest/gtest.h>

#include "metrics/metrics.h"

namespace spillway::metrics {
namespace {

TEST(EscapingTest, LabelValuesEscapeBackslashQuoteAndNewline) {
  Registry registry;
  Family<Counter>& family = registry.AddCounter("c_total", "h", {"path"});
  family.With({"C:\\dir \"x\"\nend"}).Inc();
  EXPECT_EQ(registry.Render(),
            "# HELP c_total h\n"
            "# TYPE c_total counter\n"
            "c_total{path=\"C:\\\\dir \\\"x\\\"\\nend\"} 1\n");
}

TEST(EscapingTest, HelpEscapesBackslashAndNewlineButNotQuotes) {
  Registry registry;
  registry.AddGauge("g", "a \\ b\nc \"q\"");
  EXPECT_EQ(registry.Render(),
            "# HELP g a \\\\ b\\nc \"q\"\n"
            "# TYPE g gauge\n"
            "g 0\n");
}

TEST(EscapingTest, LabelValuesMayBeEmptyOrUtf8) {
  Registry registry;
  Family<Gauge>& family = registry.AddGauge("g", "h", {"a", "b"});
  family.With({"", "Grüße"}).Set(1);
  EXPECT_EQ(registry.Render(),
            "# HELP g h\n"
            "# TYPE g gauge\n"
            "g{a=\"\",b=\"Grüße\"} 1\n");
}

TEST(EscapingTest, EscapedValuesAreDistinctChildren) {
  Registry registry;
  Family<Counter>& family = registry.AddCounter("c_total", "h", {"v"});
  family.With({"a\nb"}).Inc();
  family.With({"a\\nb"}).Inc(2);
  EXPECT_EQ(registry.Render(),
            "# HELP c_total h\n"
            "# TYPE c_total counter\n"
            "c_total{v=\"a\\nb\"} 1\n"
            "c_total{v=\"a\\\\nb\"} 2\n");
}

}  // namespace
}  // namespace spillway::metrics
