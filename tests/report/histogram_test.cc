#include "report/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "report/run_recorder.h"
#include "report/summary_json.h"

namespace spillway {
namespace {

TEST(SummaryHistogramTest, TtftBoundsAreR10FromOneMillisecondToOneHundredSeconds) {
  const std::vector<double> b = TtftBucketBoundsSeconds();
  ASSERT_EQ(b.size(), 51u);
  EXPECT_EQ(b.front(), 0.001);
  EXPECT_EQ(b[1], 0.00125);
  EXPECT_EQ(b.back(), 100.0);
  EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
  for (const double slo : {0.5, 1.0, 2.0}) {  // round SLOs are exact edges
    EXPECT_NE(std::find(b.begin(), b.end(), slo), b.end()) << slo;
  }
}

TEST(SummaryHistogramTest, SamplesFallInTheBucketWhoseUpperEdgeTheyDoNotExceed) {
  const BucketCounts h = CountInBuckets({0.0, 0.5, 1.0, 1.0001, 2.0, 2.5}, {1.0, 2.0});
  EXPECT_EQ(h.counts, (std::vector<std::int64_t>{3, 2}));  // (.., 1] and (1, 2]
  EXPECT_EQ(h.overflow, 1);
  EXPECT_EQ(h.Total(), 6);
}

TEST(SummaryHistogramTest, RunSummaryCarriesTtftHistogramAndSlosInJson) {
  RunRecorder r(GoodputSlo{1.0, 0.035, std::nullopt}, {});
  r.OnRequestDone({RequestOutcome::Kind::kCompleted, 0.0, 0.3, 1.0, 4});
  r.OnRequestDone({RequestOutcome::Kind::kCompleted, 1.0, 2.5, 3.0, 4});
  r.OnRequestDone({RequestOutcome::Kind::kAbandoned, 2.0, kNever, 4.0, 0});
  const RunSummary s = r.Finish(5.0, 5.0);
  EXPECT_EQ(s.ttft_histogram_s.Total(), s.ttft_s.count);  // the same samples
  EXPECT_EQ(s.ttft_histogram_s.Total(), 2);
  EXPECT_EQ(s.slo.ttft_s, 1.0);
  const std::string json = SummaryToJson(s);
  EXPECT_NE(json.find("\"ttft_histogram_s\""), std::string::npos);
  EXPECT_NE(json.find("\"bounds\": [1E-3,1.25E-3,"), std::string::npos) << "one line";
  const std::size_t slo = json.find("\"slo\": {");
  ASSERT_NE(slo, std::string::npos);
  EXPECT_NE(json.find("\"tpot_s\": 3.5E-2", slo), std::string::npos);
}

}  // namespace
}  // namespace spillway
