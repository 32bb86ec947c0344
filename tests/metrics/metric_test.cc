// The metric types on their own: counter monotonicity, gauge arithmetic, histogram buckets.

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "metrics/metrics.h"

namespace spillway::metrics {
namespace {

TEST(CounterTest, IgnoresNegativeAndNaNIncrements) {
  Counter c;
  c.Inc();
  c.Inc(0.5);
  c.Inc(-3);
  c.Inc(std::numeric_limits<double>::quiet_NaN());
  c.Inc(0);
  EXPECT_EQ(c.value(), 1.5);
}

TEST(GaugeTest, SetIncDec) {
  Gauge g;
  g.Set(10);
  g.Inc();
  g.Inc(0.5);
  g.Dec(3);
  g.Dec(-1);
  EXPECT_EQ(g.value(), 9.5);
  g.Set(-2);
  EXPECT_EQ(g.value(), -2.0);
}

TEST(HistogramTest, BucketsAreUpperInclusiveAndCumulative) {
  Histogram h({1, 2, 4});
  for (const double v : {-1.0, 0.0, 1.0, 1.0000001, 2.0, 3.0, 4.0, 4.5, 1e9}) {
    h.Observe(v);
  }
  EXPECT_EQ(h.CumulativeCounts(), (std::vector<std::uint64_t>{3, 5, 7, 9}));
  EXPECT_EQ(h.count(), 9u);
  EXPECT_DOUBLE_EQ(h.sum(), -1 + 0 + 1 + 1.0000001 + 2 + 3 + 4 + 4.5 + 1e9);
}

TEST(HistogramTest, InfinitiesAndNaN) {
  Histogram h({1});
  h.Observe(-std::numeric_limits<double>::infinity());
  h.Observe(std::numeric_limits<double>::infinity());
  h.Observe(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(h.CumulativeCounts(), (std::vector<std::uint64_t>{1, 3}));
  EXPECT_TRUE(std::isnan(h.sum()));
  EXPECT_EQ(h.count(), 3u);
}

TEST(HistogramTest, EmptyBoundsHaveOnlyTheInfBucket) {
  Histogram h({});
  h.Observe(7);
  EXPECT_TRUE(h.bounds().empty());
  EXPECT_EQ(h.CumulativeCounts(), (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(h.sum(), 7.0);
}

}  // namespace
}  // namespace spillway::metrics
