// HTTP/1.x details of the connection layer, over raw sockets: HTTP/1.0 clients get no chunked
// encoding (a stream to them ends when the server closes) and 1.0 keep-alive semantics; error
// replies (404, 405, 429) keep an HTTP/1.1 connection open; pipelined requests are answered in
// order; HEAD gets the head alone.

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/http_client.h"
#include "common/server_fixture.h"
#include "common/temp_dir.h"
#include "server/raw_connection.h"

namespace spillway {
namespace {

using server_test::RawConnection;
using server_test::RawPost;
using server_test::RawResponse;

using server_test::kTimeoutS;
const std::string kStreamBody = R"({"prompt":[1,2,3],"max_tokens":4,"stream":true})";
const std::string kSmallBody = R"({"prompt":[1,2,3],"max_tokens":4})";

bool Contains(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

class HttpProtocolTest : public server_test::ServerFixture {};

TEST_F(HttpProtocolTest, Http10StreamIsCloseDelimitedWithoutChunkedEncoding) {
  RawConnection conn(client().port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.Send(RawPost("HTTP/1.0", "/v1/completions", kStreamBody)));
  const std::optional<RawResponse> r = conn.ReadResponse(kTimeoutS);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->version, "HTTP/1.0");
  EXPECT_FALSE(r->Header("Transfer-Encoding").has_value()) << "chunked to an HTTP/1.0 client";
  EXPECT_FALSE(r->Header("Content-Length").has_value());
  EXPECT_TRUE(Contains(r->Header("Content-Type").value_or(""), "text/event-stream"));
  // Close-delimited: the server closed to end the body, which holds the raw SSE events.
  EXPECT_TRUE(conn.peer_closed());
  EXPECT_EQ(r->body.rfind("data: ", 0), 0u) << "body should start with an event: " << r->body;
  const std::vector<std::string> events = server_test::SseDataPayloads(r->body);
  ASSERT_FALSE(events.empty()) << r->body;
  EXPECT_EQ(events.back(), "[DONE]") << r->body;
  EXPECT_EQ(events.size(), 6u) << "4 tokens, the finish chunk and [DONE]: " << r->body;
}

TEST_F(HttpProtocolTest, Http11StreamIsChunkedAndEndsWithTheLastChunk) {
  RawConnection conn(client().port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.Send(RawPost("HTTP/1.1", "/v1/completions", kStreamBody)));
  const std::optional<RawResponse> r = conn.ReadResponse(kTimeoutS);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->Header("Transfer-Encoding"), "chunked");
  EXPECT_EQ(r->Header("Connection"), "close");
  ASSERT_GE(r->body.size(), 5u);
  EXPECT_EQ(r->body.substr(r->body.size() - 5), "0\r\n\r\n") << r->body;
  // The first chunk's size line is hex and matches its data.
  const std::size_t eol = r->body.find("\r\n");
  ASSERT_NE(eol, std::string::npos);
  const std::size_t size = std::stoul(r->body.substr(0, eol), nullptr, 16);
  ASSERT_GE(r->body.size(), eol + 2 + size + 2);
  EXPECT_EQ(r->body.substr(eol + 2, 6), "data: ");
  EXPECT_EQ(r->body.substr(eol + 2 + size, 2), "\r\n");
}

TEST_F(HttpProtocolTest, Http10ReplyHasContentLengthAndTheConnectionCloses) {
  RawConnection conn(client().port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.Send(RawPost("HTTP/1.0", "/v1/completions", kSmallBody)));
  const std::optional<RawResponse> r = conn.ReadResponse(kTimeoutS);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->version, "HTTP/1.0");
  EXPECT_FALSE(r->Header("Transfer-Encoding").has_value());
  ASSERT_TRUE(r->Header("Content-Length").has_value());
  EXPECT_EQ(std::stoul(*r->Header("Content-Length")), r->body.size());
  EXPECT_FALSE(r->Header("Connection").has_value()) << "1.0 without keep-alive: close implied";
  EXPECT_TRUE(conn.WaitClosedByPeer(kTimeoutS)) << "HTTP/1.0 without keep-alive must close";
}

TEST_F(HttpProtocolTest, Http10KeepAliveKeepsTheConnectionOpen) {
  RawConnection conn(client().port());
  ASSERT_TRUE(conn.connected());
  const std::string get = "GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    ASSERT_TRUE(conn.Send(get));
    const std::optional<RawResponse> r = conn.ReadResponse(kTimeoutS);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->Header("Connection"), "keep-alive");
    EXPECT_TRUE(r->Header("Content-Length").has_value());
  }
  // Without the token, the next answer closes.
  ASSERT_TRUE(conn.Send("GET /health HTTP/1.0\r\n\r\n"));
  ASSERT_TRUE(conn.ReadResponse(kTimeoutS).has_value());
  EXPECT_TRUE(conn.WaitClosedByPeer(kTimeoutS));
}

TEST_F(HttpProtocolTest, ErrorRepliesKeepAnHttp11ConnectionOpen) {
  RawConnection conn(client().port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.Send("GET /no-such-route HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::optional<RawResponse> r = conn.ReadResponse(kTimeoutS);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 404);
  EXPECT_FALSE(r->Header("Connection").has_value()) << "a 404 need not close";
  ASSERT_TRUE(conn.Send("GET /v1/completions HTTP/1.1\r\nHost: x\r\n\r\n"));
  r = conn.ReadResponse(kTimeoutS);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 405);
  EXPECT_FALSE(r->Header("Connection").has_value()) << "a 405 need not close";
  ASSERT_TRUE(conn.Send(RawPost("HTTP/1.1", "/v1/completions", "{not json")));
  r = conn.ReadResponse(kTimeoutS);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 400);
  ASSERT_TRUE(conn.Send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
  r = conn.ReadResponse(kTimeoutS);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);
  EXPECT_FALSE(conn.peer_closed());
}

TEST_F(HttpProtocolTest, PipelinedRequestsAreAnsweredInOrder) {
  RawConnection conn(client().port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(
      conn.Send("GET /ready HTTP/1.1\r\nHost: x\r\n\r\n"
                "GET /no-such-route HTTP/1.1\r\nHost: x\r\n\r\n"
                "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::optional<RawResponse> a = conn.ReadResponse(kTimeoutS);
  const std::optional<RawResponse> b = conn.ReadResponse(kTimeoutS);
  const std::optional<RawResponse> c = conn.ReadResponse(kTimeoutS);
  ASSERT_TRUE(a.has_value() && b.has_value() && c.has_value());
  EXPECT_EQ(a->status, 200);
  EXPECT_TRUE(Contains(a->body, "ready")) << a->body;
  EXPECT_EQ(b->status, 404);
  EXPECT_EQ(c->status, 200);
  EXPECT_EQ(c->Header("Connection"), "close");
  EXPECT_TRUE(conn.WaitClosedByPeer(kTimeoutS));
}

TEST_F(HttpProtocolTest, ExpectContinueGetsA100BeforeTheBodyIsSent) {
  RawConnection conn(client().port());
  ASSERT_TRUE(conn.connected());
  const std::string head =
      "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nExpect: 100-continue\r\n"
      "Content-Length: " +
      std::to_string(kSmallBody.size()) + "\r\n\r\n";
  ASSERT_TRUE(conn.Send(head));
  // The interim 100 comes with the head alone, before any body byte is sent.
  const std::optional<RawResponse> interim = conn.ReadResponse(kTimeoutS, /*head_only=*/true);
  ASSERT_TRUE(interim.has_value()) << "no 100 Continue";
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(conn.Send(kSmallBody));
  const std::optional<RawResponse> r = conn.ReadResponse(kTimeoutS);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200) << r->body;
}

TEST_F(HttpProtocolTest, AnHttp10ClientGetsNo100Continue) {
  RawConnection conn(client().port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(
      conn.Send(RawPost("HTTP/1.0", "/v1/completions", kSmallBody, "Expect: 100-continue\r\n")));
  const std::optional<RawResponse> r = conn.ReadResponse(kTimeoutS);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200) << "a 1xx reply to an HTTP/1.0 client: " << r->body;
}

TEST_F(HttpProtocolTest, ExpectContinueWithABodyOverTheLimitGets413WithoutSendingIt) {
  RawConnection conn(client().port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(
      conn.Send("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Expect: 100-continue\r\nContent-Length: 104857600\r\n\r\n"));
  const std::optional<RawResponse> r = conn.ReadResponse(kTimeoutS);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 413) << r->body;
}

TEST_F(HttpProtocolTest, WrongMethodOnAGetRouteGets405WithAllow) {
  for (const char* target :
       {"/v1/models", "/v1/models/spillway-emulated", "/health", "/ready", "/metrics"}) {
    const server_test::HttpResponse r = client().Send({"POST", target, "{}", {}});
    EXPECT_TRUE(server_test::IsOpenAiError(r, 405, "method_not_allowed")) << target;
    EXPECT_EQ(r.Header("Allow"), "GET, HEAD") << target;
  }
}

TEST_F(HttpProtocolTest, PostWithoutContentLengthGets411) {
  RawConnection conn(client().port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.Send("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  const std::optional<RawResponse> r = conn.ReadResponse(kTimeoutS);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 411) << r->body;
  EXPECT_TRUE(Contains(r->body, "length_required")) << r->body;
}

TEST_F(HttpProtocolTest, HeadGetsContentLengthButNoBody) {
  RawConnection conn(client().port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.Send("HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n"));
  const std::optional<RawResponse> head = conn.ReadResponse(kTimeoutS, /*head_only=*/true);
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->status, 200);
  ASSERT_TRUE(head->Header("Content-Length").has_value());
  EXPECT_GT(std::stoul(*head->Header("Content-Length")), 0u);
  // Had a body been sent, it would now be read as the next response's head.
  ASSERT_TRUE(conn.Send("GET /ready HTTP/1.1\r\nHost: x\r\n\r\n"));
  const std::optional<RawResponse> next = conn.ReadResponse(kTimeoutS);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->version, "HTTP/1.1");
  EXPECT_EQ(next->status, 200);
}

// An API key whose bucket has one token and refills every 1000 s: after the first request,
// every request is 429 rate_limited, as in bench/reject_throughput.sh.
class RateLimitedKeepAliveTest : public server_test::ServerFixture {
 protected:
  std::vector<std::string> ServerArgs() override {
    const std::string config = dir_.Write("one_token.yaml",
                                          "api_keys:\n"
                                          "  - key: test-key\n"
                                          "    tenant: t\n"
                                          "    rate_rps: 0.001\n"
                                          "    burst: 1\n");
    return {"--config", config};
  }
  testing_util::TempDir dir_;
};

TEST_F(RateLimitedKeepAliveTest, RateLimited429sKeepTheConnectionOpen) {
  RawConnection conn(client().port());
  ASSERT_TRUE(conn.connected());
  const std::string request =
      RawPost("HTTP/1.1", "/v1/completions", kSmallBody, "Authorization: Bearer test-key\r\n");
  ASSERT_TRUE(conn.Send(request));
  std::optional<RawResponse> r = conn.ReadResponse(kTimeoutS);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200) << r->body;
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE("rejection " + std::to_string(i));
    ASSERT_TRUE(conn.Send(request));
    r = conn.ReadResponse(kTimeoutS);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 429) << r->body;
    EXPECT_EQ(r->Header("X-Overload-Reason"), "rate_limited");
    EXPECT_TRUE(r->Header("Retry-After").has_value());
    EXPECT_FALSE(r->Header("Connection").has_value()) << "a 429 must not close the connection";
    EXPECT_EQ(std::stoul(r->Header("Content-Length").value_or("0")), r->body.size());
    EXPECT_FALSE(conn.peer_closed());
  }
}

}  // namespace
}  // namespace spillway
