// Answers and clients at the edges of HTTP/1.1, through the gateway in front of a scripted
// endpoint (an `openai` endpoint: no metrics). Pass criteria: a whole answer of 9 MB (over
// Beast's 8 MB default) is relayed; one whose Content-Length is over the gateway's 64 MiB gets
// 502 upstream_answer_too_large, and the endpoint is not ejected for it; a close-delimited stream
// that closes after its [DONE] is complete, one that closes before it ends with an SSE error
// event upstream_unavailable and counts as failed; a client that sends its request and shuts its
// sending side is the client gone (499, as nginx and serve count it), and its connection is
// closed at once, not after the 60 s idle timeout.

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/write.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "gateway/gateway_fixture.h"
#include "gateway/scripted_upstream.h"

namespace spillway::gateway_test {
namespace {

using tcp = boost::asio::ip::tcp;

/// How the scripted endpoint answers every POST.
enum class Answer : std::uint8_t {
  kNineMegabytes,
  kTooLargeByItsLength,
  kStreamClosedAfterDone,
  kStreamClosedBeforeDone,
  kAfterHalfASecond,
};

std::string StreamHead() {
  return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
}

class LiveGatewayAnswersTest : public GatewayFixture {
 protected:
  LiveGatewayAnswersTest()
      : scripted_([this](tcp::socket& s, int) {
          boost::system::error_code ec;
          const std::string event = R"(data: {"choices":[{"text":" ok"}]})"
                                    "\n\n";
          switch (answer_.load()) {
            case Answer::kNineMegabytes:
              boost::asio::write(s, boost::asio::buffer(Answer200(std::string(9'000'000, 'x'))),
                                 ec);
              break;
            case Answer::kTooLargeByItsLength:
              boost::asio::write(
                  s,
                  boost::asio::buffer("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                      "Content-Length: 70000000\r\n\r\n{"),
                  ec);
              std::this_thread::sleep_for(std::chrono::milliseconds(200));
              s.close(ec);
              break;
            case Answer::kStreamClosedAfterDone:
              boost::asio::write(s, boost::asio::buffer(StreamHead() + event + "data: [DONE]\n\n"),
                                 ec);
              s.close(ec);
              break;
            case Answer::kStreamClosedBeforeDone:
              boost::asio::write(s, boost::asio::buffer(StreamHead() + event), ec);
              s.close(ec);
              break;
            case Answer::kAfterHalfASecond:
              std::this_thread::sleep_for(std::chrono::milliseconds(500));
              boost::asio::write(s, boost::asio::buffer(Answer200(kCompletionJson)), ec);
              break;
          }
        }) {}
  int upstreams() const override { return 0; }
  std::vector<std::string> GatewayArgs() const override {
    return {"--endpoint", "openai=http://127.0.0.1:" + std::to_string(scripted_.port()), "--model",
            "scripted"};
  }
  HttpResponse Ask(bool stream = false) const {
    return gateway().Post(
        "/v1/completions",
        std::string(R"({"prompt":[1,2,3],"max_tokens":1)") + (stream ? R"(,"stream":true})" : "}"),
        {}, 10);
  }
  double Requests(const std::string& status, const std::string& reason) const {
    return MetricSum(GatewayMetrics(), "spillway_gateway_requests_total",
                     {{"status", status}, {"reason", reason}});
  }

  std::atomic<Answer> answer_{Answer::kNineMegabytes};
  ScriptedUpstream scripted_;  // after answer_: its threads read it
};

TEST_F(LiveGatewayAnswersTest, AWholeAnswerOverBeastsDefaultLimitIsRelayed) {
  const HttpResponse r = Ask();
  EXPECT_EQ(r.status, 200) << r.error << r.body.substr(0, 300);
  EXPECT_EQ(r.body.size(), 9'000'000u);
}

TEST_F(LiveGatewayAnswersTest, AnAnswerTooLargeToRelayWholeIsA502AndNoEjection) {
  answer_ = Answer::kTooLargeByItsLength;
  for (int i = 0; i < 4; ++i) {  // more than eject_after_errors (3)
    const HttpResponse r = Ask();
    EXPECT_TRUE(server_test::IsOpenAiError(r, 502, "upstream_answer_too_large")) << r.body;
  }
  EXPECT_EQ(MetricSum(GatewayMetrics(), "spillway_gateway_endpoint_state", {{"state", "healthy"}}),
            1)
      << "not ejected: " << GatewayMetrics();
  // The gateway counts an answer once it is written: the last may reach the client first
  // (measured under ASan in CI: 3 of 4 counted at the first read).
  EXPECT_TRUE(Eventually([&] { return Requests("502", "upstream_answer_too_large") == 4; }, 5))
      << GatewayMetrics();
}

TEST_F(LiveGatewayAnswersTest, AClosedStreamIsCompleteOnlyAfterItsDone) {
  answer_ = Answer::kStreamClosedAfterDone;
  const HttpResponse done = Ask(/*stream=*/true);
  ASSERT_EQ(done.status, 200) << done.error;
  EXPECT_NE(done.body.find("[DONE]"), std::string::npos) << done.body;
  EXPECT_EQ(done.body.find("upstream_unavailable"), std::string::npos) << done.body;

  answer_ = Answer::kStreamClosedBeforeDone;
  const HttpResponse cut = Ask(/*stream=*/true);
  ASSERT_EQ(cut.status, 200) << cut.error;
  EXPECT_NE(cut.body.find("upstream_unavailable"), std::string::npos)
      << "a close before [DONE] is the endpoint failing: " << cut.body;
  EXPECT_TRUE(Eventually(
      [&] {
        return MetricSum(GatewayMetrics(), "spillway_gateway_completed_total") == 1 &&
               MetricSum(GatewayMetrics(), "spillway_gateway_failed_total") == 1;
      },
      5))
      << GatewayMetrics();
}

TEST_F(LiveGatewayAnswersTest, AClientThatShutsItsSendingSideIsGoneAndItsConnectionCloses) {
  answer_ = Answer::kAfterHalfASecond;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(gateway_process().port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  timeval five{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &five, sizeof five);
  const std::string body = R"({"prompt":[1,2,3],"max_tokens":1})";
  const std::string request =
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  ::shutdown(fd, SHUT_WR);
  const auto sent = std::chrono::steady_clock::now();
  char byte = 0;
  const ssize_t n = ::recv(fd, &byte, 1, 0);
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  ::close(fd);
  EXPECT_EQ(n, 0) << "closed without an answer (the client is gone)";
  EXPECT_LT(took_s, 2.0) << "closed at once, not at the idle timeout";
  EXPECT_TRUE(Eventually([&] { return Requests("499", "client_gone") == 1; }, 5))
      << GatewayMetrics();
}

}  // namespace
}  // namespace spillway::gateway_test
