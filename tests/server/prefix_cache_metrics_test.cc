// Prefix caching in `spillway serve`, as /metrics reports it under vLLM's names: the same
// token-id prompt asked again finds all but its last partial block cached, a prompt sharing
// only its first 64 tokens finds those, a text prompt asked again finds its whole segments;
// vllm:cache_config_info says how the cache is configured. With caching off nothing is found.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"

namespace spillway {
namespace {

using server_test::HttpResponse;
using server_test::MetricSum;
using server_test::ModelLabel;

// A completion body over token ids: `shared` ids common to every prompt, then `own` ids from
// `salt`.
std::string TokenPrompt(int shared, int own, int salt) {
  std::string ids;
  for (int i = 0; i < shared + own; ++i) {
    const int id = i < shared ? 1000 + i : salt * 10000 + i;
    ids += (i == 0 ? "" : ",") + std::to_string(id);
  }
  return R"({"prompt":[)" + ids + R"(],"max_tokens":1})";
}

class PrefixCacheMetricsTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    return {"--enable-prefix-caching", "true", "--policy", "unbounded"};
  }
  double Counter(const std::string& metrics, const char* name) {
    return MetricSum(metrics, name, ModelLabel());
  }
};

TEST_F(PrefixCacheMetricsTest, RepeatedPrefixesAreFoundInTheCache) {
  const std::string before = Metrics();
  EXPECT_NE(before.find(R"(vllm:cache_config_info{block_size="16",enable_prefix_caching="True",)"),
            std::string::npos)
      << before;
  for (const std::string& body :
       {TokenPrompt(100, 0, 1), TokenPrompt(100, 0, 1), TokenPrompt(64, 36, 2)}) {
    const HttpResponse r = client().Post("/v1/completions", body, {}, 60);
    ASSERT_EQ(r.status, 200) << r.body;
  }
  const std::string after = Metrics();
  const double queries = Counter(after, "vllm:prefix_cache_queries_total") -
                         Counter(before, "vllm:prefix_cache_queries_total");
  const double hits = Counter(after, "vllm:prefix_cache_hits_total") -
                      Counter(before, "vllm:prefix_cache_hits_total");
  EXPECT_EQ(queries, 300);
  // The repeat: 6 whole blocks of its 100 tokens (the last token is always computed); the
  // third prompt: its 4 shared blocks.
  EXPECT_EQ(hits, 96 + 64);
}

TEST_F(PrefixCacheMetricsTest, ATextPromptAskedAgainFindsItsWholeSegments) {
  const std::string text(64 * 5 + 10, 'x');  // 5 whole segments of 64 bytes (16 tokens each)
  const std::string body = R"({"prompt":")" + text + R"(","max_tokens":1})";
  const std::string before = Metrics();
  for (int i = 0; i < 2; ++i) {
    const HttpResponse r = client().Post("/v1/completions", body, {}, 60);
    ASSERT_EQ(r.status, 200) << r.body;
  }
  const std::string after = Metrics();
  EXPECT_EQ(Counter(after, "vllm:prefix_cache_hits_total") -
                Counter(before, "vllm:prefix_cache_hits_total"),
            5 * 16);
}

class PrefixCacheOffMetricsTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override { return {"--policy", "unbounded"}; }
};

TEST_F(PrefixCacheOffMetricsTest, WithCachingOffNothingIsFound) {
  for (int i = 0; i < 2; ++i) {
    const HttpResponse r = client().Post("/v1/completions", TokenPrompt(100, 0, 1), {}, 60);
    ASSERT_EQ(r.status, 200) << r.body;
  }
  const std::string after = Metrics();
  EXPECT_NE(after.find(R"(enable_prefix_caching="False")"), std::string::npos) << after;
  EXPECT_EQ(MetricSum(after, "vllm:prefix_cache_hits_total", ModelLabel()), 0);
}

}  // namespace
}  // namespace spillway
