// The deadlines of a connection's requests (net::ReadDeadline, kept lazily: one timer per
// connection, re-armed only when it fires early): the first request's head must arrive within
// --header-timeout-s, each next one within --idle-timeout-s of the previous reply, and a busy
// keep-alive connection is never cut while its deadline keeps moving forward. Live: the bounds
// on elapsed time are 0.95 s to 3 s around timeouts of 1 s (measured: 1.00 to 1.24 s).

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/server_fixture.h"
#include "server/raw_connection.h"

namespace spillway {
namespace {

using server_test::MetricSum;
using server_test::RawConnection;
using server_test::RawResponse;

using server_test::kTimeoutS;

constexpr std::string_view kHealthGet = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";

double ElapsedSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

class LiveRequestDeadlineTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    return {"--header-timeout-s", "1", "--idle-timeout-s", "1"};
  }
};

TEST_F(LiveRequestDeadlineTest, ABusyKeepAliveConnectionOutlivesItsTimeoutsThenClosesWhenIdle) {
  RawConnection conn(server().port());
  ASSERT_TRUE(conn.connected());
  // 2.4 s of requests 0.3 s apart: longer than either timeout, never idle for one.
  const auto start = std::chrono::steady_clock::now();
  auto last_reply = start;
  while (ElapsedSince(start) < 2.4) {
    ASSERT_TRUE(conn.Send(kHealthGet)) << conn.error();
    const std::optional<RawResponse> r = conn.ReadResponse(kTimeoutS);
    ASSERT_TRUE(r.has_value()) << "cut off after " << ElapsedSince(start) << " s";
    EXPECT_EQ(r->status, 200);
    last_reply = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  // Then idle: closed by the 1 s idle timeout, counted from the last reply (the 300 ms of the
  // last sleep included), not earlier. The timer may fire up to one scheduling delay late.
  EXPECT_TRUE(conn.WaitClosedByPeer(kTimeoutS));
  const double idle_s = ElapsedSince(last_reply);
  EXPECT_GE(idle_s, 0.95);
  EXPECT_LT(idle_s, 3.0);
}

TEST_F(LiveRequestDeadlineTest, AHeadSentByteByByteIsCutOffAtTheHeaderTimeoutAndCountedAs408) {
  RawConnection conn(server().port());
  ASSERT_TRUE(conn.connected());
  const std::string head =
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nX-Filler: " + std::string(100, 'x') + "\r\n\r\n";
  const auto start = std::chrono::steady_clock::now();
  // One byte every 50 ms: bytes keep coming, the head would take 7 s; the deadline is for the
  // whole head (slowloris), not for the silence between bytes.
  for (char c : head) {
    if (!conn.Send(std::string(1, c), 1) || conn.peer_closed()) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (ElapsedSince(start) > 3.0) {
      break;
    }
  }
  EXPECT_TRUE(conn.WaitClosedByPeer(kTimeoutS));
  const double took_s = ElapsedSince(start);
  EXPECT_GE(took_s, 0.95);
  EXPECT_LT(took_s, 3.0) << "the 1 s header timeout did not cut the head off";
  double count = 0;
  for (int i = 0; i < 100 && count < 1; ++i) {
    count = MetricSum(Metrics(), "spillway_http_requests_total", {{"status", "408"}});
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(count, 1);
}

TEST_F(LiveRequestDeadlineTest, PipelinedRequestsAreAnsweredInOrderWithoutAnotherRead) {
  RawConnection conn(server().port());
  ASSERT_TRUE(conn.connected());
  const std::string three =
      std::string(kHealthGet) + "GET /ready HTTP/1.1\r\nHost: x\r\n\r\n" + std::string(kHealthGet);
  ASSERT_TRUE(conn.Send(three));
  for (int i = 0; i < 3; ++i) {
    const std::optional<RawResponse> r = conn.ReadResponse(kTimeoutS);
    ASSERT_TRUE(r.has_value()) << "reply " << i;
    EXPECT_EQ(r->status, 200) << "reply " << i;
  }
}

}  // namespace
}  // namespace spillway
