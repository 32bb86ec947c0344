// Programmer errors stop the process (SPILLWAY_CHECK): invalid or duplicate names, bad label
// names, bad bounds and a wrong number of label values. Valid colon names are accepted.

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "metrics/metrics.h"

namespace spillway::metrics {
namespace {

class RegistryDeathTest : public testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(RegistryDeathTest, DuplicateFamilyName) {
  Registry registry;
  registry.AddCounter("requests_total", "h");
  EXPECT_DEATH(registry.AddCounter("requests_total", "h"), "check failed: !duplicate_name");
  EXPECT_DEATH(registry.AddGauge("requests_total", "h"), "check failed: !duplicate_name");
  EXPECT_DEATH(registry.AddHistogram("requests_total", "h", {1}), "!duplicate_name");
}

TEST_F(RegistryDeathTest, NameClashingWithHistogramSeries) {
  Registry registry;
  registry.AddHistogram("latency_seconds", "h", {1});
  EXPECT_DEATH(registry.AddGauge("latency_seconds_count", "h"), "clashes_with_histogram_series");
  EXPECT_DEATH(registry.AddCounter("latency_seconds_sum", "h"), "clashes_with_histogram_series");
  registry.AddGauge("queue_bucket", "h");
  EXPECT_DEATH(registry.AddHistogram("queue", "h", {1}), "clashes_with_histogram_series");
}

TEST_F(RegistryDeathTest, InvalidMetricNames) {
  Registry registry;
  for (const std::string name : {"", "1abc", "a-b", "a b", "a.b", "caf\xc3\xa9", "a{b}"}) {
    EXPECT_DEATH(registry.AddCounter(name, "h"), "IsValidMetricName") << name;
  }
}

TEST_F(RegistryDeathTest, InvalidLabelNames) {
  Registry registry;
  for (const std::string label : {"", "1x", "a:b", "a-b", "__reserved"}) {
    EXPECT_DEATH(registry.AddGauge("g", "h", {label}), "AreValidLabelNames") << label;
  }
  EXPECT_DEATH(registry.AddGauge("g", "h", {"a", "a"}), "AreDistinct");
  EXPECT_DEATH(registry.AddHistogram("h_seconds", "h", {1}, {"le"}), "!uses_le");
}

TEST_F(RegistryDeathTest, InvalidHistogramBounds) {
  Registry registry;
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const std::vector<double>& bounds :
       std::vector<std::vector<double>>{{2, 1}, {1, 1}, {1, inf}, {nan}, {-inf, 0}}) {
    EXPECT_DEATH(registry.AddHistogram("h_seconds", "h", bounds), "AreValidBounds");
    EXPECT_DEATH(Histogram{bounds}, "AreValidBounds");
  }
}

TEST_F(RegistryDeathTest, WrongNumberOfLabelValues) {
  Registry registry;
  Family<Counter>& labelled = registry.AddCounter("c_total", "h", {"a", "b"});
  EXPECT_DEATH(labelled.With({"x"}), "label_values.size\\(\\) == label_names_.size\\(\\)");
  EXPECT_DEATH(labelled.With({"x", "y", "z"}), "label_values.size");
  EXPECT_DEATH(labelled.Get(), "label_values.size");
  Family<Gauge>& unlabelled = registry.AddGauge("g", "h");
  EXPECT_DEATH(unlabelled.With({"x"}), "label_values.size");
}

TEST(RegistryNamesTest, ColonAndUnderscoreNamesAreAccepted) {
  Registry registry;
  registry.AddGauge("vllm:num_requests_waiting", "h", {"model_name"});
  registry.AddCounter(":leading_colon_total", "h");
  registry.AddCounter("_under_total", "h", {"_x", "A9"});
  registry.AddHistogram("vllm:time_to_first_token_seconds", "h", {1}, {"model_name"});
  registry.AddGauge("vllm:time_to_first_token_seconds_total", "h");  // not a histogram series
  EXPECT_NE(registry.Render().find("# TYPE vllm:num_requests_waiting gauge\n"), std::string::npos);
}

}  // namespace
}  // namespace spillway::metrics
