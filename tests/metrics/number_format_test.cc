// Sample values and le bounds: integers (up to 2^53) without exponent, other finite values in
// the shortest round-trip form, and "+Inf", "-Inf", "NaN".

#include <cmath>
#include <limits>
#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include "metrics/metrics.h"

namespace spillway::metrics {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The rendered sample line of a gauge "g" set to `v`, without the trailing newline.
std::string RenderedGauge(double v) {
  Registry registry;
  registry.AddGauge("g", "h").Get().Set(v);
  const std::string text = registry.Render();
  const std::string prefix = "# HELP g h\n# TYPE g gauge\ng ";
  if (text.rfind(prefix, 0) != 0 || text.back() != '\n') {
    return "unexpected: " + text;
  }
  return text.substr(prefix.size(), text.size() - prefix.size() - 1);
}

struct Case {
  double value;
  const char* text;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.text; }

class NumberFormatTest : public testing::TestWithParam<Case> {};

TEST_P(NumberFormatTest, RendersValue) {
  EXPECT_EQ(RenderedGauge(GetParam().value), GetParam().text);
}

// Beyond 2^53 std::to_chars chooses between fixed and exponent notation by length: 2^54 is
// shorter in fixed notation ("18014398509481984"), 1e20 in exponent notation ("1e+20").
INSTANTIATE_TEST_SUITE_P(
    Values, NumberFormatTest,
    testing::Values(Case{1, "1"}, Case{0.5, "0.5"}, Case{1e-7, "1e-07"}, Case{1e20, "1e+20"},
                    Case{kInf, "+Inf"}, Case{-kInf, "-Inf"},
                    Case{std::numeric_limits<double>::quiet_NaN(), "NaN"}, Case{0, "0"},
                    Case{-0.0, "0"}, Case{-3, "-3"}, Case{1e6, "1000000"},
                    Case{123456789, "123456789"}, Case{9007199254740992.0, "9007199254740992"},
                    Case{18014398509481984.0, "18014398509481984"}, Case{0.1, "0.1"},
                    Case{1.0 / 3.0, "0.3333333333333333"}, Case{-2.5, "-2.5"}, Case{0.001, "0.001"},
                    Case{0.0001, "1e-04"}, Case{1.5e300, "1.5e+300"},
                    Case{std::numeric_limits<double>::denorm_min(), "5e-324"}));

TEST(NumberFormatBoundsTest, LeLabelsUseTheSameFormat) {
  Registry registry;
  registry.AddHistogram("h_seconds", "h", {1e-7, 0.001, 0.5, 2560});
  const std::string text = registry.Render();
  EXPECT_NE(text.find("h_seconds_bucket{le=\"1e-07\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_bucket{le=\"0.001\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_bucket{le=\"0.5\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_bucket{le=\"2560\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_seconds_bucket{le=\"+Inf\"} 0\n"), std::string::npos) << text;
}

TEST(NumberFormatBoundsTest, EveryRenderedValueRoundTrips) {
  for (const double v : {0.1, 1.0 / 3.0, 2.0 / 3.0, 1e-300, 6.02214076e23, 1234.5678}) {
    EXPECT_EQ(std::stod(RenderedGauge(v)), v) << RenderedGauge(v);
  }
}

}  // namespace
}  // namespace spillway::metrics
