// Overload: a burst of concurrent requests far beyond a two-sequence batch gets the overload
// contract (429 with Retry-After, X-Overload-Reason and the OpenAI error JSON) instead of queueing
// without bound; nothing fails with 5xx, every request is answered, /metrics counts the 429s
// seen, and the engine returns to idle.

#include <latch>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"

namespace spillway {
namespace {

using server_test::HttpResponse;
using server_test::MetricSum;
using server_test::ModelLabel;

class OverloadTest : public server_test::ServerFixture {
 protected:
  // The timeout hierarchy holds: client 5 s > request deadline 4 s > TTFT SLO 0.3 s.
  std::vector<std::string> ServerArgs() override {
    return {"--max-num-seqs",      "2", "--ttft-slo-s",       "0.3",
            "--request-timeout-s", "4", "--client-timeout-s", "5"};
  }
};

bool IsWholeSecondsAtLeastOne(const std::string& s) {
  if (s.empty() || s.size() > 9) {
    return false;
  }
  for (char c : s) {
    if (c < '0' || c > '9') {
      return false;
    }
  }
  return std::stoi(s) >= 1;
}

TEST_F(OverloadTest, ConcurrentBurstGets429WithOverloadContractAndEngineReturnsToIdle) {
  constexpr int kClients = 60;
  const double http_429_before =
      MetricSum(Metrics(), "spillway_http_requests_total", {{"status", "429"}});

  std::vector<HttpResponse> responses(kClients);
  {
    std::latch go(kClients);
    std::vector<std::jthread> clients;
    for (int i = 0; i < kClients; ++i) {
      clients.emplace_back([this, i, &go, &responses] {
        go.arrive_and_wait();
        // 10 s: longer than the server's 4 s request deadline, so the server answers first.
        responses[i] = client().Post("/v1/completions",
                                     R"({"prompt":[1,2,3,4,5,6,7,8],"max_tokens":64})", {}, 10);
      });
    }
  }  // joins every client

  const std::set<std::string> kOverloadReasons = {"queue_delay_exceeded", "kv_saturation",
                                                  "queue_delay_and_kv_saturation",
                                                  "queue_deadline_exceeded"};
  std::map<int, int> by_status;
  int seen_429 = 0;
  for (int i = 0; i < kClients; ++i) {
    const HttpResponse& r = responses[i];
    ++by_status[r.status];
    EXPECT_NE(r.status, 0) << "request " << i << " got no answer: " << r.error;
    EXPECT_LT(r.status, 500) << "request " << i << ": " << r.body;
    if (r.status != 429) {
      continue;
    }
    ++seen_429;
    const std::string retry_after = r.Header("Retry-After").value_or("");
    EXPECT_TRUE(IsWholeSecondsAtLeastOne(retry_after))
        << "request " << i << ": Retry-After '" << retry_after << "'";
    const std::string reason = r.Header("X-Overload-Reason").value_or("");
    EXPECT_EQ(kOverloadReasons.count(reason), 1u)
        << "request " << i << ": X-Overload-Reason '" << reason << "'";
    EXPECT_TRUE(server_test::IsOpenAiError(r, 429, reason)) << "request " << i;
  }
  std::string summary;
  for (const auto& [status, n] : by_status) {
    summary += " " + std::to_string(status) + "x" + std::to_string(n);
  }
  RecordProperty("statuses", summary);
  SCOPED_TRACE("statuses:" + summary);
  EXPECT_GT(seen_429, 0);
  EXPECT_GT(by_status[200], 0) << "admission should still let some requests through";

  // /metrics counts exactly the 429 responses the clients saw.
  const double http_429_after =
      MetricSum(Metrics(), "spillway_http_requests_total", {{"status", "429"}});
  EXPECT_EQ(http_429_after - http_429_before, seen_429);

  // The engine returns to idle: nothing running or waiting within 10 s.
  bool idle = false;
  const std::string text = PollMetrics(
      [](const std::string& m) {
        return server_test::MetricCount(m, "vllm:num_requests_running", ModelLabel()) == 1 &&
               MetricSum(m, "vllm:num_requests_running", ModelLabel()) == 0 &&
               MetricSum(m, "vllm:num_requests_waiting", ModelLabel()) == 0;
      },
      10, &idle);
  EXPECT_TRUE(idle) << "running " << MetricSum(text, "vllm:num_requests_running", ModelLabel())
                    << ", waiting " << MetricSum(text, "vllm:num_requests_waiting", ModelLabel());
  ExpectNormalCompletionSucceeds();
}

}  // namespace
}  // namespace spillway
