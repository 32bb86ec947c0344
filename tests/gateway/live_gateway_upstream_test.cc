// The gateway in front of an upstream that behaves as real servers sometimes do, scripted on
// loopback (an `openai` endpoint: no metrics). Pass criteria: interim 1xx answers (100
// Continue, 103 Early Hints) before the real one are read past, and the client gets the 200;
// the gateway's deadline ends a stream whose client stopped reading at the deadline, not at
// the 30 s write timeout, and the ledger counts it as a request_timeout; an answer the endpoint
// sends unasked on an idle connection reaches nobody; a request on a reused connection is sent
// again on a new one only when the endpoint closed it at once, not after holding it.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/write.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "gateway/gateway_fixture.h"
#include "gateway/scripted_upstream.h"

namespace spillway::gateway_test {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

class LiveGatewayUpstreamTest : public GatewayFixture {
 protected:
  explicit LiveGatewayUpstreamTest(ScriptedUpstream::Answer answer)
      : scripted_(std::move(answer)) {}
  int upstreams() const override { return 0; }
  std::vector<std::string> GatewayArgs() const override {
    return {"--endpoint",
            "openai=http://127.0.0.1:" + std::to_string(scripted_.port()),
            "--model",
            "scripted",
            "--request-timeout-s",
            "1.5"};
  }

  ScriptedUpstream scripted_;
};

class LiveGatewayInterimTest : public LiveGatewayUpstreamTest {
 protected:
  LiveGatewayInterimTest()
      : LiveGatewayUpstreamTest([](tcp::socket& s, int) {
          boost::system::error_code ignored;
          asio::write(s,
                      asio::buffer("HTTP/1.1 100 Continue\r\n\r\n"
                                   "HTTP/1.1 103 Early Hints\r\nLink: </style.css>\r\n\r\n"
                                   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                   "Content-Length: " +
                                   std::to_string(kCompletionJson.size()) + "\r\n\r\n" +
                                   std::string(kCompletionJson)),
                      ignored);
        }) {}
};

TEST_F(LiveGatewayInterimTest, InterimAnswersAreReadPastAndTheClientGetsTheRealOne) {
  for (int i = 0; i < 3; ++i) {  // on a new upstream connection, then on reused ones
    const HttpResponse r =
        gateway().Post("/v1/completions", R"({"prompt":[1,2,3],"max_tokens":1})", {}, 5);
    EXPECT_EQ(r.status, 200) << r.error << r.body;
    EXPECT_EQ(r.body, kCompletionJson);
  }
}

class LiveGatewayStalledClientTest : public LiveGatewayUpstreamTest {
 protected:
  LiveGatewayStalledClientTest()
      : LiveGatewayUpstreamTest([](tcp::socket& s, int) {
          // A stream that never ends: 64 KB events until the gateway closes the connection.
          boost::system::error_code ec;
          asio::write(s,
                      asio::buffer(std::string("HTTP/1.1 200 OK\r\nContent-Type: "
                                               "text/event-stream\r\nConnection: close\r\n\r\n")),
                      ec);
          const std::string event = "data: " + std::string(64 * 1024, 'x') + "\n\n";
          while (!ec) {
            asio::write(s, asio::buffer(event), ec);
          }
          s.close(ec);
        }) {}
};

TEST_F(LiveGatewayStalledClientTest, TheDeadlineEndsAStreamWhoseClientStoppedReading) {
  // A client with a small receive buffer that sends a streaming request and never reads.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  const int small = 4096;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(gateway_process().port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  const std::string body = R"({"prompt":[1,2,3],"max_tokens":16,"stream":true})";
  const std::string request =
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
      "application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  const auto sent = std::chrono::steady_clock::now();
  const bool ended = Eventually(
      [&] {
        return MetricSum(GatewayMetrics(), "spillway_gateway_requests_total",
                         {{"reason", "request_timeout"}}) == 1;
      },
      5.0);
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  ::close(fd);
  ASSERT_TRUE(ended) << "still in flight 5 s after a 1.5 s deadline: " << GatewayMetrics();
  EXPECT_GE(took_s, 1.4);
  EXPECT_LT(took_s, 3.0) << "the deadline, not the 30 s write timeout";
  EXPECT_EQ(MetricSum(GatewayMetrics(), "spillway_gateway_failed_total"), 1);
}

class LiveGatewayUnaskedAnswerTest : public LiveGatewayUpstreamTest {
 protected:
  LiveGatewayUnaskedAnswerTest()
      : LiveGatewayUpstreamTest([](tcp::socket& s, int) {
          // The answer, then, on the idle keep-alive connection, one nobody asked for.
          boost::system::error_code ignored;
          asio::write(s, asio::buffer(Answer200(kCompletionJson)), ignored);
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          asio::write(s, asio::buffer(Answer200(R"({"stale":true})")), ignored);
        }) {}
};

TEST_F(LiveGatewayUnaskedAnswerTest, AnAnswerSentOnAnIdleConnectionNeverReachesTheNextClient) {
  for (int i = 0; i < 3; ++i) {
    const HttpResponse r =
        gateway().Post("/v1/completions", R"({"prompt":[1,2,3],"max_tokens":1})", {}, 5);
    EXPECT_EQ(r.status, 200) << r.error << r.body;
    EXPECT_EQ(r.body, kCompletionJson) << "request " << i;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the unasked answer comes
  }
}

/// Answers the first POST on each connection; on a later one, closes the connection without an
/// answer after `hold` (zero: as soon as the request is read).
ScriptedUpstream::Answer CloseReusedAfter(std::chrono::milliseconds hold) {
  return [hold](tcp::socket& s, int nth) {
    boost::system::error_code ignored;
    if (nth == 1) {
      asio::write(s, asio::buffer(Answer200(kCompletionJson)), ignored);
      return;
    }
    std::this_thread::sleep_for(hold);
    s.shutdown(tcp::socket::shutdown_both, ignored);
  };
}

class LiveGatewayHeldThenClosedTest : public LiveGatewayUpstreamTest {
 protected:
  LiveGatewayHeldThenClosedTest()
      : LiveGatewayUpstreamTest(CloseReusedAfter(std::chrono::milliseconds(200))) {}
};

TEST_F(LiveGatewayHeldThenClosedTest, ARequestTheEndpointHeldBeforeClosingIsNotSentAgainUnasked) {
  const std::string body = R"({"prompt":[1,2,3],"max_tokens":1})";
  ASSERT_EQ(gateway().Post("/v1/completions", body, {}, 5).status, 200);
  // On the reused connection: the endpoint may have started on it, so no silent second send;
  // the only endpoint failed and nothing else can be tried.
  const HttpResponse r = gateway().Post("/v1/completions", body, {}, 5);
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_NE(r.body.find("upstream_unavailable"), std::string::npos) << r.body;
  EXPECT_EQ(scripted_.posts(), 2) << "the held request was sent once";
}

class LiveGatewayStaleCloseTest : public LiveGatewayUpstreamTest {
 protected:
  LiveGatewayStaleCloseTest() : LiveGatewayUpstreamTest(CloseReusedAfter({})) {}
};

TEST_F(LiveGatewayStaleCloseTest, AReusedConnectionClosedAtOnceIsRetriedOnANewOneUnseen) {
  const std::string body = R"({"prompt":[1,2,3],"max_tokens":1})";
  ASSERT_EQ(gateway().Post("/v1/completions", body, {}, 5).status, 200);
  const HttpResponse r = gateway().Post("/v1/completions", body, {}, 5);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, kCompletionJson);
  EXPECT_EQ(scripted_.posts(), 3) << "sent again on a new connection";
}

}  // namespace
}  // namespace spillway::gateway_test
