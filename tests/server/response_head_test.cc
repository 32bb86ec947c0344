// The hand-written response head of src/net/response_head.h: status line in the request's
// version, framing headers by version (no chunked encoding for HTTP/1.0; Connection: close for
// 1.1 only when closing, Connection: keep-alive for 1.0 only when keeping), no header with CR
// or LF (response splitting), and chunk-size lines in hex; and the gateway's request head to
// its endpoints: request line, Host, the headers passed on in order, duplicates kept,
// Content-Length, none with CR, LF or NUL (request smuggling).

#include "net/response_head.h"

#include <string>

#include <gtest/gtest.h>

namespace spillway::net {
namespace {

std::string Head(unsigned status, const ResponseFraming& framing, const Headers& headers = {}) {
  std::string out;
  AppendResponseHead(&out, status, "application/json", framing, headers);
  return out;
}

TEST(ResponseHeadTest, Http11KeepAliveReplyHasContentLengthAndNoConnectionHeader) {
  ResponseFraming f;
  f.content_length = 42;
  EXPECT_EQ(Head(429, f, {{"Retry-After", "3"}}),
            "HTTP/1.1 429 Too Many Requests\r\nServer: spillway\r\n"
            "Content-Type: application/json\r\nContent-Length: 42\r\nRetry-After: 3\r\n\r\n");
}

TEST(ResponseHeadTest, Http11CloseSaysConnectionClose) {
  ResponseFraming f;
  f.content_length = 0;
  f.keep_alive = false;
  EXPECT_EQ(Head(413, f),
            "HTTP/1.1 413 Content Too Large\r\nServer: spillway\r\n"
            "Content-Type: application/json\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
}

TEST(ResponseHeadTest, Http10SaysKeepAliveOnlyWhenKeeping) {
  ResponseFraming f;
  f.version = 10;
  f.content_length = 2;
  EXPECT_NE(Head(200, f).find("\r\nConnection: keep-alive\r\n"), std::string::npos);
  f.keep_alive = false;
  EXPECT_EQ(Head(200, f).find("Connection"), std::string::npos);
  EXPECT_EQ(Head(200, f).rfind("HTTP/1.0 200 OK\r\n", 0), 0u);
}

TEST(ResponseHeadTest, ChunkedOnlyForHttp11) {
  ResponseFraming f;
  f.chunked = true;
  f.keep_alive = false;
  EXPECT_NE(Head(200, f).find("\r\nTransfer-Encoding: chunked\r\n"), std::string::npos);
  f.version = 10;
  const std::string h10 = Head(200, f);
  EXPECT_EQ(h10.find("Transfer-Encoding"), std::string::npos) << h10;
  EXPECT_EQ(h10.find("Content-Length"), std::string::npos) << h10;
}

TEST(ResponseHeadTest, HeadersWithLineBreaksAreDropped) {
  ResponseFraming f;
  f.content_length = 0;
  const std::string h =
      Head(200, f, {{"X-Ok", "1"}, {"X-Bad", "a\r\nSet-Cookie: x=y"}, {"X-Bad\n", "2"}});
  EXPECT_NE(h.find("X-Ok: 1\r\n"), std::string::npos);
  EXPECT_EQ(h.find("X-Bad"), std::string::npos) << h;
  EXPECT_EQ(h.find("Set-Cookie"), std::string::npos) << h;
}

TEST(ResponseHeadTest, UnknownStatusHasAnEmptyReason) {
  ResponseFraming f;
  f.content_length = 0;
  EXPECT_EQ(Head(299, f).rfind("HTTP/1.1 299 \r\n", 0), 0u);
}

TEST(ResponseHeadTest, RequestHeadKeepsHeadersInOrderAndDropsUnsafeOnes) {
  std::string out;
  AppendRequestHead(&out, "POST", "/v1/completions", "10.0.0.1:8000",
                    {{"Authorization", "Bearer k"},
                     {"X-Tag", "a"},
                     {"X-Tag", "b"},
                     {"X-Evil", "x\r\nContent-Length: 0"},
                     {std::string("X-Nul\0", 6), "y"}},
                    34);
  EXPECT_EQ(out,
            "POST /v1/completions HTTP/1.1\r\nHost: 10.0.0.1:8000\r\n"
            "Authorization: Bearer k\r\nX-Tag: a\r\nX-Tag: b\r\nContent-Length: 34\r\n\r\n");
}

TEST(ResponseHeadTest, ChunkSizeIsHex) {
  std::string out;
  AppendChunkSize(&out, 0x1a2b);
  EXPECT_EQ(out, "1a2b\r\n");
}

}  // namespace
}  // namespace spillway::net
