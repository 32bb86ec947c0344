// The KV cache's usage in `spillway serve`'s /metrics under both of vLLM's names: v1's
// vllm:kv_cache_usage_perc and v0's vllm:gpu_cache_usage_perc, which vLLM v1 still exports
// and the Gateway API Inference Extension's endpoint picker reads by default (deploy/k8s/
// inferencepool.yaml). Both hold the same fraction while a stream decodes and after it ends.

#include <string>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"

namespace spillway {
namespace {

using server_test::MetricSum;
using server_test::ModelLabel;
using server_test::PendingRequest;

class KvUsageMetricsTest : public server_test::ServerFixture {};

TEST_F(KvUsageMetricsTest, BothNamesReportTheSameUsageWhileAStreamHoldsBlocksAndAfter) {
  PendingRequest stream(server().port(),
                        server_test::CompletionRequest(
                            R"({"prompt":[1,2,3,4,5,6,7,8],"max_tokens":2000,"stream":true})"),
                        10);
  ASSERT_TRUE(stream.ok()) << stream.error();
  ASSERT_TRUE(stream.NextEvent(10).has_value()) << stream.error();
  auto usage = [](const std::string& m, const char* name) {
    return MetricSum(m, name, ModelLabel());
  };
  // (Both are set at each step's end; a scrape between the two sets may see them a step apart.)
  bool held = false;
  std::string m = PollMetrics(
      [&](const std::string& text) {
        return usage(text, "vllm:kv_cache_usage_perc") > 0 &&
               usage(text, "vllm:gpu_cache_usage_perc") == usage(text, "vllm:kv_cache_usage_perc");
      },
      5, &held);
  ASSERT_TRUE(held) << m;
  stream.Close();
  m = PollMetrics(
      [&](const std::string& text) { return usage(text, "vllm:kv_cache_usage_perc") == 0; }, 5,
      &held);
  ASSERT_TRUE(held) << m;
  EXPECT_EQ(usage(m, "vllm:gpu_cache_usage_perc"), 0) << m;
}

}  // namespace
}  // namespace spillway
