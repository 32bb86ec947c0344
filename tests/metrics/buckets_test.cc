// Bucket helpers: ExponentialBuckets and vLLM's TTFT bounds (kLatencyBucketsSeconds).

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "metrics/buckets.h"
#include "metrics/metrics.h"

namespace spillway::metrics {
namespace {

TEST(BucketsTest, ExponentialBucketsMultiplyByFactor) {
  EXPECT_EQ(ExponentialBuckets(1, 2, 4), (std::vector<double>{1, 2, 4, 8}));
  EXPECT_EQ(ExponentialBuckets(0.5, 4, 1), (std::vector<double>{0.5}));
  const std::vector<double> b = ExponentialBuckets(0.001, 10, 4);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_DOUBLE_EQ(b[3], 1.0);
  EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
}

TEST(BucketsTest, ExponentialBucketsAreValidHistogramBounds) {
  Histogram h(ExponentialBuckets(0.01, 1.5, 30));
  h.Observe(0.02);
  EXPECT_EQ(h.CumulativeCounts().size(), 31u);
}

TEST(BucketsTest, LatencyBucketsMatchVllmTimeToFirstToken) {
  // vllm/v1/metrics/loggers.py, histogram_time_to_first_token.
  const std::vector<double> expected = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                        0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                        20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
  EXPECT_EQ(LatencyBucketsSeconds(), expected);
  EXPECT_TRUE(std::is_sorted(kLatencyBucketsSeconds.begin(), kLatencyBucketsSeconds.end()));
}

TEST(BucketsTest, LatencyBucketsRenderAsVllmDoes) {
  Registry registry;
  registry.AddHistogram("vllm:time_to_first_token_seconds", "h", LatencyBucketsSeconds());
  const std::string text = registry.Render();
  EXPECT_NE(text.find("_bucket{le=\"0.001\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("_bucket{le=\"2560\"} 0\n"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2 + 23 + 2);
}

TEST(BucketsDeathTest, ExponentialBucketsRejectBadArguments) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(ExponentialBuckets(0, 2, 3), "start > 0.0");
  EXPECT_DEATH(ExponentialBuckets(1, 1, 3), "factor > 1.0");
  EXPECT_DEATH(ExponentialBuckets(1, 2, 0), "count >= 1");
  EXPECT_DEATH(ExponentialBuckets(1e300, 1e10, 3), "isfinite");
}

}  // namespace
}  // namespace spillway::metrics
