// Cancellation: clients that close their connections mid-request free the engine. Streaming
// clients leave after the first chunk and non-streaming ones after 0.3 s without reading; the
// engine then holds no running or waiting request and no KV cache, and counts one
// client_disconnect abort per request abandoned in flight.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <latch>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"

namespace spillway {
namespace {

using server_test::HttpRequest;
using server_test::MetricSum;
using server_test::ModelLabel;
using server_test::PendingRequest;

const std::map<std::string, std::string> kClientDisconnect = {{"cause", "client_disconnect"}};
const std::map<std::string, std::string> kSlowClient = {{"cause", "slow_client"}};

class ClientDisconnectTest : public server_test::ServerFixture {
 protected:
  // A batch large enough that all 40 requests run at once: each one is admitted and in flight
  // when its client leaves. The request deadline is long enough for max_tokens 2000 (else
  // predictive admission refuses them as deadline_unreachable).
  std::vector<std::string> ServerArgs() override {
    return {"--max-num-seqs", "64", "--request-timeout-s", "120", "--client-timeout-s", "150"};
  }
};

// The exposition's sample lines of the metrics `names`, for failure messages.
std::string SeriesOf(const std::string& exposition, const std::vector<std::string>& names) {
  std::string out;
  std::size_t pos = 0;
  while (pos < exposition.size()) {
    const std::size_t eol = std::min(exposition.find('\n', pos), exposition.size());
    const std::string line = exposition.substr(pos, eol - pos);
    pos = eol + 1;
    for (const std::string& name : names) {
      if (line.starts_with(name + "{") || line.starts_with(name + " ")) {
        out += "  " + line + "\n";
      }
    }
  }
  return out;
}

HttpRequest LongCompletion(bool stream) {
  return server_test::CompletionRequest(
      std::string(R"({"prompt":[1,2,3,4,5,6,7,8],"max_tokens":2000,"stream":)") +
      (stream ? "true" : "false") + "}");
}

TEST_F(ClientDisconnectTest, ClosedConnectionsAbortTheirRequestsAndFreeTheEngine) {
  constexpr int kStreaming = 20;
  constexpr int kNonStreaming = 20;
  const std::string before = Metrics();
  const double disconnects_before = MetricSum(before, "spillway_aborts_total", kClientDisconnect);
  const double slow_before = MetricSum(before, "spillway_aborts_total", kSlowClient);
  const double all_aborts_before = MetricSum(before, "spillway_aborts_total");

  std::atomic<int> closed_in_flight{0};
  std::atomic<int> streams_closed{0};
  std::atomic<int> non_streaming_closed{0};
  {
    std::latch go(kStreaming + kNonStreaming);
    std::vector<std::jthread> clients;
    const std::uint16_t port = client().port();
    for (int i = 0; i < kStreaming; ++i) {
      clients.emplace_back([&, port, i] {
        go.arrive_and_wait();
        PendingRequest stream(port, LongCompletion(true), 10);
        ASSERT_TRUE(stream.ok()) << "stream " << i << ": " << stream.error();
        const auto& head = stream.ReadHead(10);
        ASSERT_EQ(head.status, 200) << "stream " << i << ": " << head.error;
        const auto first = stream.NextEvent(10);
        ASSERT_TRUE(first.has_value()) << "stream " << i << ": " << stream.error();
        EXPECT_NE(*first, "[DONE]");
        stream.Close();  // leaves with 1999 tokens still to come
        ++closed_in_flight;
        ++streams_closed;
      });
    }
    for (int i = 0; i < kNonStreaming; ++i) {
      clients.emplace_back([&, port, i] {
        go.arrive_and_wait();
        PendingRequest request(port, LongCompletion(false), 10);
        ASSERT_TRUE(request.ok()) << "request " << i << ": " << request.error();
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        // A request rejected at admission would have its answer waiting already; only one
        // still unanswered is abandoned in flight.
        const bool in_flight = !request.ResponseStarted();
        request.Close();
        if (in_flight) {
          ++closed_in_flight;
        }
        ++non_streaming_closed;
      });
    }
  }  // joins every client

  ASSERT_EQ(streams_closed.load(), kStreaming);
  ASSERT_EQ(non_streaming_closed.load(), kNonStreaming);
  EXPECT_GE(closed_in_flight.load(), 30) << "too few requests were in flight when closed";

  const int expected_aborts = closed_in_flight.load();
  RecordProperty("closed_in_flight", expected_aborts);
  // Wait until the engine is idle and has counted an abort (of any cause) per closed request.
  bool settled = false;
  const std::string text = PollMetrics(
      [&](const std::string& m) {
        return server_test::MetricCount(m, "vllm:num_requests_running", ModelLabel()) == 1 &&
               MetricSum(m, "vllm:num_requests_running", ModelLabel()) == 0 &&
               MetricSum(m, "vllm:num_requests_waiting", ModelLabel()) == 0 &&
               MetricSum(m, "vllm:kv_cache_usage_perc", ModelLabel()) == 0 &&
               MetricSum(m, "spillway_aborts_total") - all_aborts_before >= expected_aborts;
      },
      5, &settled);
  SCOPED_TRACE("5 s after the clients left:\n" +
               SeriesOf(text, {"vllm:num_requests_running", "vllm:num_requests_waiting",
                               "vllm:kv_cache_usage_perc", "spillway_aborts_total",
                               "spillway_http_requests_total", "vllm:request_success_total"}));
  EXPECT_TRUE(settled) << "not idle with an abort counted per closed request within 5 s";
  EXPECT_EQ(MetricSum(text, "vllm:num_requests_running", ModelLabel()), 0);
  EXPECT_EQ(MetricSum(text, "vllm:num_requests_waiting", ModelLabel()), 0);
  EXPECT_EQ(MetricSum(text, "vllm:kv_cache_usage_perc", ModelLabel()), 0);
  // Every request abandoned in flight is counted, and counted as a client disconnect: none of
  // these clients read slowly, they left.
  EXPECT_GE(MetricSum(text, "spillway_aborts_total", kClientDisconnect) - disconnects_before,
            expected_aborts);
  EXPECT_EQ(MetricSum(text, "spillway_aborts_total", kSlowClient) - slow_before, 0)
      << "clients that closed their connections were counted as slow clients";
  ExpectNormalCompletionSucceeds();
}

}  // namespace
}  // namespace spillway
