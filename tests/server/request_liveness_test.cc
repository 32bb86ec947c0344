// Liveness: every request gets its answer while other connections come and go. Several clients
// each send a series of small completions, one connection per request, to a server with more
// I/O threads than cores; every request must be answered (200) well within the server's
// request deadline, and no I/O thread may stay blocked on one connection.

#include <atomic>
#include <chrono>
#include <latch>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"

namespace spillway {
namespace {

using server_test::HttpResponse;

class RequestLivenessTest : public server_test::ServerFixture {
 protected:
  // More I/O threads than the machine's cores, so connections are handled in parallel.
  std::vector<std::string> ServerArgs() override { return {"--threads", "8"}; }
};

TEST_F(RequestLivenessTest, EverySequentialRequestOfConcurrentClientsIsAnswered) {
  constexpr int kClients = 8;
  constexpr int kRequestsPerClient = 40;
  // Longer than the server's 4.5 s request deadline: by then the server has answered, with a
  // 504 at worst.
  constexpr double kClientTimeoutS = 8;
  std::atomic<int> answered{0};
  std::mutex mu;
  std::vector<std::string> failures;
  {
    std::latch go(kClients);
    std::vector<std::jthread> clients;
    for (int c = 0; c < kClients; ++c) {
      clients.emplace_back([&, c] {
        go.arrive_and_wait();
        for (int i = 0; i < kRequestsPerClient; ++i) {
          const auto start = std::chrono::steady_clock::now();
          const HttpResponse r = client().Post(
              "/v1/completions", server_test::SmallCompletionBody(2), {}, kClientTimeoutS);
          if (r.status == 200) {
            ++answered;
            continue;
          }
          const double waited_s =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          std::lock_guard lock(mu);
          failures.push_back("client " + std::to_string(c) + " request " + std::to_string(i) +
                             ": status " + std::to_string(r.status) + " after " +
                             std::to_string(waited_s) + " s (" + r.error + ") " + r.body);
          return;  // one failure per client is enough; keeps the test short
        }
      });
    }
  }  // joins every client

  std::string report;
  for (const std::string& f : failures) {
    report += f + "\n";
  }
  EXPECT_EQ(answered.load(), kClients * kRequestsPerClient) << report;
  EXPECT_TRUE(failures.empty()) << report;
  ExpectNormalCompletionSucceeds();
}

}  // namespace
}  // namespace spillway
