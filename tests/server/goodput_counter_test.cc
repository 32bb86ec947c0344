// spillway_goodput_requests_total: requests completed within their SLOs as the server measures
// them, the series the policy's goodput alert watches (docs/policy.md). A completion within
// both SLOs counts; one that misses the TPOT SLO completes (vllm:request_success_total) but
// does not count.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/server_fixture.h"

namespace spillway {
namespace {

using server_test::MetricSum;

class GoodputCounterTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override { return {"--policy", "unbounded"}; }
};

TEST_F(GoodputCounterTest, ACompletionWithinTheSlosCounts) {
  ExpectNormalCompletionSucceeds();
  const std::string text = Metrics();
  EXPECT_EQ(MetricSum(text, "spillway_goodput_requests_total"), 1) << text;
}

class GoodputCounterMissedTpotTest : public server_test::ServerFixture {
 protected:
  // No step takes under a microsecond: every multi-token completion misses this TPOT SLO.
  std::vector<std::string> ServerArgs() override {
    return {"--policy", "unbounded", "--no-slo-budgets", "--tpot-slo-s", "0.000001"};
  }
};

TEST_F(GoodputCounterMissedTpotTest, ACompletionOutsideTheTpotSloDoesNotCount) {
  ExpectNormalCompletionSucceeds();
  const std::string text = Metrics();
  EXPECT_EQ(MetricSum(text, "vllm:request_success_total"), 1) << text;
  EXPECT_EQ(MetricSum(text, "spillway_goodput_requests_total"), 0) << text;
}

}  // namespace
}  // namespace spillway
