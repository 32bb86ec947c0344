// Preemption on a tight KV pool, as /metrics reports it: two requests that each grow to 7 of
// the pool's 8 blocks cannot both run to the end, so the later one is preempted (vLLM's rule:
// the latest arrival), recomputed once the first has finished, and both complete. The server
// counts the preemption (vllm:num_preemptions_total) and the tokens whose KV cache it
// discarded (spillway_recomputed_prefill_tokens_total), and the recompute's prefill shows up
// again in vllm:prompt_tokens_total. And a request that outgrows the whole pool preempts
// itself and, its recompute fitting nowhere, fails fast with the clear reason
// preemption_limit (503, or an SSE error event on a stream).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"

namespace spillway {
namespace {

using server_test::HttpRequest;
using server_test::HttpResponse;
using server_test::MetricSum;
using server_test::ModelLabel;
using server_test::PendingRequest;

constexpr int kPromptTokens = 16;  // one KV block of 16 tokens
constexpr int kMaxTokens = 96;     // 16 + 96 = 112 tokens: 7 blocks at the end
constexpr int kRequests = 2;

class PreemptionMetricsTest : public server_test::ServerFixture {
 protected:
  // 8 KV blocks; no admission policy in the way; a deadline long enough for the preempted
  // request to wait for the first one and then run (a few seconds on a loaded machine).
  std::vector<std::string> ServerArgs() override {
    return {"--num-gpu-blocks",    "8",  "--policy",           "unbounded",
            "--request-timeout-s", "60", "--client-timeout-s", "90"};
  }
};

HttpRequest Completion(int max_tokens = kMaxTokens, bool stream = false) {
  std::string prompt;
  for (int i = 0; i < kPromptTokens; ++i) {
    prompt += (i == 0 ? "" : ",") + std::to_string(1000 + i);
  }
  HttpRequest r;
  r.method = "POST";
  r.target = "/v1/completions";
  r.body = R"({"prompt":[)" + prompt + R"(],"max_tokens":)" + std::to_string(max_tokens) +
           (stream ? R"(,"stream":true})" : "}");
  return r;
}

TEST_F(PreemptionMetricsTest, APreemptionCountsTheTokensToRecomputeAndTheirPrefill) {
  const std::string before = Metrics();
  std::vector<std::unique_ptr<PendingRequest>> requests;
  for (int i = 0; i < kRequests; ++i) {
    requests.push_back(std::make_unique<PendingRequest>(client().port(), Completion(), 60));
    ASSERT_TRUE(requests.back()->ok()) << requests.back()->error();
  }
  for (auto& r : requests) {
    const HttpResponse response = r->ReadResponse(60);
    ASSERT_EQ(response.status, 200) << response.error << response.body;
    EXPECT_NE(response.body.find(R"("completion_tokens":)" + std::to_string(kMaxTokens)),
              std::string::npos)
        << response.body;
  }
  const std::string after = Metrics();
  const auto delta = [&](const char* name) {
    return MetricSum(after, name) - MetricSum(before, name);
  };
  const double preemptions = MetricSum(after, "vllm:num_preemptions_total", ModelLabel()) -
                             MetricSum(before, "vllm:num_preemptions_total", ModelLabel());
  const double recomputed = delta("spillway_recomputed_prefill_tokens_total");
  const double prefill = delta("vllm:prompt_tokens_total");
  EXPECT_GE(preemptions, 1);
  // The victim had computed at least its prompt and at most prompt + output tokens.
  EXPECT_GE(recomputed, kPromptTokens);
  EXPECT_LE(recomputed, preemptions * (kPromptTokens + kMaxTokens));
  // Every prompt once, plus the recompute (which also prefills the one token generated but
  // not yet in the cache when it was preempted, hence up to one token per preemption more).
  EXPECT_GE(prefill, kRequests * kPromptTokens + recomputed);
  EXPECT_LE(prefill, kRequests * kPromptTokens + recomputed + preemptions);
}

// 16 + 200 tokens need 14 blocks of the pool's 8 (128 tokens): the request could only ever
// preempt itself, so it is refused at the door with 400 kv_capacity_exceeded (no retry helps),
// streaming or not, saying how many max_tokens would fit; those then complete.
TEST_F(PreemptionMetricsTest, ARequestLargerThanTheWholePoolIsA400AtTheDoor) {
  const HttpResponse plain = client().Post("/v1/completions", Completion(200).body, {}, 60);
  EXPECT_TRUE(server_test::IsOpenAiError(plain, 400, "kv_capacity_exceeded"));
  EXPECT_NE(plain.body.find("at most 112 max_tokens"), std::string::npos) << plain.body;
  EXPECT_FALSE(plain.Header("Retry-After").has_value());

  PendingRequest stream(client().port(), Completion(200, true), 60);
  const HttpResponse head = stream.ReadResponse(60);
  EXPECT_TRUE(server_test::IsOpenAiError(head, 400, "kv_capacity_exceeded"));

  const HttpResponse fits = client().Post("/v1/completions", Completion(112).body, {}, 60);
  EXPECT_EQ(fits.status, 200) << fits.body;
}

}  // namespace
}  // namespace spillway
