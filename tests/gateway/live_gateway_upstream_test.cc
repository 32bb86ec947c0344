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

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gateway/gateway_fixture.h"

namespace spillway::gateway_test {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

constexpr std::string_view kCompletionJson =
    R"({"id":"cmpl-1","object":"text_completion","created":0,"model":"scripted","choices":)"
    R"([{"index":0,"text":" ok","logprobs":null,"finish_reason":"length"}],)"
    R"("usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}})";

/// An HTTP/1.1 upstream on loopback that answers GETs (the gateway's probes) with a model list
/// and every POST, read to the end of its body, with `answer(socket, nth)`, `nth` counting the
/// POSTs on that connection from 1; one thread per connection, all joined on destruction.
class ScriptedUpstream {
 public:
  using Answer = std::function<void(tcp::socket&, int nth)>;
  explicit ScriptedUpstream(Answer answer)
      : answer_(std::move(answer)),
        acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
        listen_fd_(acceptor_.native_handle()),
        port_(acceptor_.local_endpoint().port()),
        accept_thread_([this] { AcceptLoop(); }) {}
  ~ScriptedUpstream() {
    // Raw shutdowns wake the threads blocked in accept and reads (closing an Asio object that
    // another thread is using would race); the objects are closed once the threads are done.
    stop_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    accept_thread_.join();
    {
      const std::lock_guard lock(mu_);
      for (const int fd : fds_) {
        ::shutdown(fd, SHUT_RDWR);
      }
    }
    for (std::thread& t : threads_) {
      t.join();
    }
  }
  ScriptedUpstream(const ScriptedUpstream&) = delete;
  ScriptedUpstream& operator=(const ScriptedUpstream&) = delete;

  std::uint16_t port() const { return port_; }
  /// POSTs received, on all connections.
  int posts() const { return posts_; }

 private:
  void AcceptLoop() {
    while (!stop_) {
      auto socket = std::make_shared<tcp::socket>(ioc_);
      boost::system::error_code ec;
      acceptor_.accept(*socket, ec);
      if (ec) {
        return;
      }
      const std::lock_guard lock(mu_);
      fds_.push_back(socket->native_handle());
      threads_.emplace_back([socket, this] { Serve(*socket); });
    }
  }
  void Serve(tcp::socket& socket) {
    asio::streambuf in;
    int posts_here = 0;
    for (;;) {
      boost::system::error_code ec;
      const std::size_t head_bytes = asio::read_until(socket, in, "\r\n\r\n", ec);
      if (ec) {
        return;
      }
      std::string head(asio::buffers_begin(in.data()),
                       asio::buffers_begin(in.data()) + static_cast<std::ptrdiff_t>(head_bytes));
      in.consume(head_bytes);
      std::size_t length = 0;
      if (const auto at = head.find("Content-Length: "); at != std::string::npos) {
        length = std::stoul(head.substr(at + 16));
      }
      if (in.size() < length) {
        asio::read(socket, in, asio::transfer_exactly(length - in.size()), ec);
      }
      in.consume(length);
      if (ec) {
        return;
      }
      if (head.starts_with("GET")) {
        const std::string models =
            R"({"object":"list","data":[{"id":"scripted","object":"model"}]})";
        asio::write(socket,
                    asio::buffer("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 "Content-Length: " +
                                 std::to_string(models.size()) + "\r\n\r\n" + models),
                    ec);
      } else {
        ++posts_;
        answer_(socket, ++posts_here);
      }
      if (ec) {
        return;
      }
    }
  }

  Answer answer_;
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  int listen_fd_;
  std::uint16_t port_;
  std::atomic<bool> stop_{false};
  std::atomic<int> posts_{0};
  std::mutex mu_;
  std::vector<int> fds_;  // of the connections, for the shutdowns
  std::vector<std::thread> threads_;
  std::thread accept_thread_;  // last: started once the rest exists
};

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

/// A complete keep-alive answer with `body`.
std::string Answer200(std::string_view body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

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
