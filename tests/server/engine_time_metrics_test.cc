// spillway_not_completed_engine_seconds_total: engine time spent on requests that did not
// complete for their client. A completed request adds nothing; one whose client left
// mid-stream adds the steps it was in (as the simulator's "engine s on not-completed").

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/server_fixture.h"

namespace spillway {
namespace {

using server_test::HttpRequest;
using server_test::MetricSum;
using server_test::PendingRequest;

class EngineTimeMetricsTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    return {"--policy", "unbounded", "--request-timeout-s", "30", "--client-timeout-s", "40"};
  }
};

TEST_F(EngineTimeMetricsTest, OnlyRequestsThatDidNotCompleteCount) {
  ExpectNormalCompletionSucceeds();
  const std::string after_completion = Metrics();
  EXPECT_GT(MetricSum(after_completion, "spillway_engine_busy_seconds_total"), 0);
  EXPECT_EQ(MetricSum(after_completion, "spillway_not_completed_engine_seconds_total"), 0);

  HttpRequest stream;
  stream.method = "POST";
  stream.target = "/v1/completions";
  stream.body = R"({"prompt":[1,2,3],"max_tokens":400,"stream":true,"ignore_eos":true})";
  PendingRequest left(client().port(), stream, 30);
  ASSERT_EQ(left.ReadHead(30).status, 200);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(left.NextEvent(30).has_value());
  }
  left.Close();
  bool counted = false;
  const std::string text = PollMetrics(
      [](const std::string& m) {
        return MetricSum(m, "spillway_not_completed_engine_seconds_total") > 0;
      },
      5.0, &counted);
  EXPECT_TRUE(counted) << text;
  EXPECT_LE(MetricSum(text, "spillway_not_completed_engine_seconds_total"),
            MetricSum(text, "spillway_engine_busy_seconds_total"));
}

}  // namespace
}  // namespace spillway
