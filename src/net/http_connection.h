#pragma once
// One accepted HTTP/1.1 connection as the request handlers see it: the parsed request, and
// awaitable operations to reply, to stream a chunked response (SSE), and to notice that the
// client went away. Boost.Beast stays behind this header's .cc for everything but the types.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spillway::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;

using Request = http::request<http::string_body>;
using Headers = std::vector<std::pair<std::string, std::string>>;

class HttpConnection {
 public:
  HttpConnection(beast::tcp_stream& stream, beast::flat_buffer& buffer, const Request& request)
      : stream_(stream), buffer_(buffer), request_(request) {}

  const Request& request() const { return request_; }
  std::string_view target() const;
  bool keep_alive() const { return keep_alive_; }

  /// Sends a complete response with `body` (Content-Type `content_type`) and `headers`.
  /// Returns false when the write failed (client gone).
  /// (`body` is an rvalue reference, not a value: GCC 12 mishandles class prvalues passed by
  /// value to a coroutine.)
  asio::awaitable<bool> Reply(unsigned status, std::string_view content_type, std::string&& body,
                              const Headers& headers = {});

  /// Starts a chunked `text/event-stream` response (status 200) with `headers`.
  asio::awaitable<bool> StartStream(const Headers& headers = {});
  /// Writes one chunk of a started stream; false when the client is gone.
  asio::awaitable<bool> WriteChunk(std::string_view data);
  /// Ends the chunked stream (last chunk). The connection closes afterwards.
  asio::awaitable<bool> EndStream();

  /// Completes when the client closes its side or the connection breaks (EOF or error on a
  /// pending read). Bytes that arrive meanwhile (a pipelined request) end the watch as "not
  /// gone" after a peek: returns true when the client is gone, false when it sent data.
  /// Cancel it through the awaitable's cancellation (e.g. awaitable_operators ||).
  asio::awaitable<bool> WaitClientGone();

  /// Marks the connection to close after this exchange.
  void set_close() { keep_alive_ = false; }

 private:
  beast::tcp_stream& stream_;
  beast::flat_buffer& buffer_;
  const Request& request_;
  bool keep_alive_ = true;
  bool streaming_ = false;
};

}  // namespace spillway::net
