#include "report/percentiles.h"

#include <gtest/gtest.h>

#include <cmath>

namespace spillway {
namespace {

TEST(PercentilesTest, NearestRankOnHandComputedValues) {
  std::vector<double> v = {5, 1, 4, 2, 3, 10, 9, 8, 7, 6};  // 1..10
  const Percentiles p = Summarize(v);
  EXPECT_EQ(p.count, 10);
  EXPECT_DOUBLE_EQ(p.p50, 5);   // rank ceil(0.5 * 10) = 5
  EXPECT_DOUBLE_EQ(p.p95, 10);  // rank ceil(9.5) = 10
  EXPECT_DOUBLE_EQ(p.p99, 10);
  EXPECT_DOUBLE_EQ(p.mean, 5.5);
  EXPECT_DOUBLE_EQ(p.max, 10);
}

TEST(PercentilesTest, EmptyIsAllZero) {
  std::vector<double> v;
  const Percentiles p = Summarize(v);
  EXPECT_EQ(p.count, 0);
  EXPECT_EQ(p.p99, 0);
}

TEST(LogHistogramTest, PercentilesWithinOnePercentOfExact) {
  LogHistogram h;
  std::vector<double> exact;
  for (int i = 1; i <= 10000; ++i) {
    const double v = 0.001 * std::pow(1.0007, i);  // 1 ms .. ~1.1 s
    h.Add(v);
    exact.push_back(v);
  }
  const Percentiles e = Summarize(exact);
  for (const auto& [approx, truth] :
       {std::pair{h.Percentile(50), e.p50}, std::pair{h.Percentile(95), e.p95},
        std::pair{h.Percentile(99), e.p99}}) {
    EXPECT_NEAR(approx, truth, 0.01 * truth);
  }
  EXPECT_EQ(h.count(), 10000);
  EXPECT_DOUBLE_EQ(h.Summary().max, e.max);
}

}  // namespace
}  // namespace spillway
