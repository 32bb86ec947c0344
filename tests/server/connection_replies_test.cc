// Replies the connection layer makes before a request reaches the API handler still show up in
// spillway_http_requests_total{status}: 413 (body over --max-body-bytes), 400 (malformed HTTP),
// 431 (headers over 64 KiB), 503 (connections over --max-connections) and 408 (a request cut
// off by --header-timeout-s; nothing is sent for it).

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"
#include "server/raw_connection.h"

namespace spillway {
namespace {

using server_test::HttpResponse;
using server_test::IsOpenAiError;
using server_test::MetricSum;
using server_test::RawConnection;
using server_test::RawPost;
using server_test::RawResponse;

using server_test::kTimeoutS;

class ConnectionRepliesTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    return {"--max-body-bytes", "4096", "--header-timeout-s", "1", "--max-connections", "4"};
  }

  /// spillway_http_requests_total{status} once it reaches `at_least`, polling /metrics for up
  /// to `timeout_s` (a scrape refused with 503 while connections are full is retried).
  double CountWhenAtLeast(const std::string& status, double at_least, double timeout_s) const {
    const auto give_up = std::chrono::steady_clock::now() +
                         std::chrono::milliseconds(static_cast<int>(timeout_s * 1000));
    double count = 0;
    for (;;) {
      const HttpResponse r = client().Get("/metrics");
      if (r.status == 200) {
        count = MetricSum(r.body, "spillway_http_requests_total", {{"status", status}});
      }
      if (count >= at_least || std::chrono::steady_clock::now() > give_up) {
        return count;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
};

TEST_F(ConnectionRepliesTest, BodyOverTheLimitIsAnswered413AndCounted) {
  const std::string body = R"({"max_tokens":4,"prompt":")" + std::string(8000, 'a') + R"("})";
  const HttpResponse r = client().Post("/v1/completions", body);
  EXPECT_TRUE(IsOpenAiError(r, 413, "body_too_large"));
  EXPECT_GE(CountWhenAtLeast("413", 1, kTimeoutS), 1);
}

TEST_F(ConnectionRepliesTest, MalformedRequestIsAnswered400AndCounted) {
  RawConnection conn(client().port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.Send("THIS IS NOT HTTP\r\n\r\n"));
  const std::optional<RawResponse> r = conn.ReadResponse(kTimeoutS);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(r->Header("Connection"), "close");
  EXPECT_GE(CountWhenAtLeast("400", 1, kTimeoutS), 1);
}

TEST_F(ConnectionRepliesTest, HeadersOverTheLimitAreAnswered431AndCounted) {
  RawConnection conn(client().port());
  ASSERT_TRUE(conn.connected());
  const std::string big = "X-Filler: " + std::string(70 * 1024, 'x') + "\r\n";
  conn.Send(RawPost("HTTP/1.1", "/v1/completions", "{}", big));  // may fail once answered
  const std::optional<RawResponse> r = conn.ReadResponse(kTimeoutS);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 431) << r->body;
  EXPECT_GE(CountWhenAtLeast("431", 1, kTimeoutS), 1);
}

TEST_F(ConnectionRepliesTest, RequestCutOffByTheHeaderTimeoutIsCountedAs408) {
  RawConnection conn(client().port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.Send("POST /v1/completions HTTP/1.1\r\nHost: x\r\n"));  // never finished
  EXPECT_TRUE(conn.WaitClosedByPeer(kTimeoutS)) << "the 1 s header timeout should close";
  EXPECT_GE(CountWhenAtLeast("408", 1, kTimeoutS), 1);
}

TEST_F(ConnectionRepliesTest, AnIdleConnectionClosedByTheTimeoutIsNotCounted) {
  {
    RawConnection conn(client().port());
    ASSERT_TRUE(conn.connected());
    EXPECT_TRUE(conn.WaitClosedByPeer(kTimeoutS)) << "the 1 s header timeout should close";
  }
  EXPECT_EQ(CountWhenAtLeast("408", 1, 0.5), 0) << "no request had started: nothing to count";
}

TEST_F(ConnectionRepliesTest, ConnectionsOverTheCapAreAnswered503AndCounted) {
  {
    // Four connections that each completed a request are certainly counted as open.
    std::vector<std::unique_ptr<RawConnection>> open;
    for (int i = 0; i < 4; ++i) {
      open.push_back(std::make_unique<RawConnection>(client().port()));
      ASSERT_TRUE(open.back()->connected());
      ASSERT_TRUE(open.back()->Send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
      const std::optional<RawResponse> r = open.back()->ReadResponse(kTimeoutS);
      ASSERT_TRUE(r.has_value());
      ASSERT_EQ(r->status, 200);
    }
    RawConnection fifth(client().port());
    ASSERT_TRUE(fifth.connected());
    const std::optional<RawResponse> r = fifth.ReadResponse(kTimeoutS);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 503) << r->body;
    EXPECT_EQ(r->Header("X-Overload-Reason"), "too_many_connections");
    EXPECT_EQ(r->Header("Connection"), "close");
    EXPECT_EQ(std::stoul(r->Header("Content-Length").value_or("0")), r->body.size());
  }
  EXPECT_GE(CountWhenAtLeast("503", 1, kTimeoutS), 1);
}

}  // namespace
}  // namespace spillway
