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
  // SLOs no completion misses, whatever the machine: under ThreadSanitizer on a busy CI
  // machine a 4-token stream's TPOT once passed the default 35 ms and the count stayed 0 (the
  // TTFT SLO stays below the 4.5 s request deadline, as serve requires).
  std::vector<std::string> ServerArgs() override {
    return {"--policy", "unbounded", "--no-slo-budgets", "--ttft-slo-s", "3", "--tpot-slo-s", "60"};
  }
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
