#pragma once
// One accepted HTTP/1.x connection as the request handlers see it: the parsed request, and
// awaitable operations to reply, to stream a response (SSE), and to notice that the client
// went away. Boost.Beast stays behind this header's .cc for everything but the types.
//
// Writes go out without waiting when the socket's send buffer has room (the usual case for a
// reply of a few hundred bytes) and fall back to an asynchronous write under a timeout (30 s
// unless set) otherwise. HTTP/1.0 clients get no chunked encoding: a stream to them is ended by
// closing.

#include <array>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "net/response_head.h"

namespace spillway::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;

using Request = http::request<http::string_body>;

class HttpConnection {
 public:
  /// `scratch` is the session's reusable buffer for response heads and chunk framing; the
  /// socket of `stream` is switched to non-blocking mode (Asio's asynchronous operations are
  /// unaffected).
  HttpConnection(beast::tcp_stream& stream, beast::flat_buffer& buffer, const Request& request,
                 std::string& scratch);

  const Request& request() const { return request_; }
  std::string_view target() const;
  /// False once the connection is to close after this exchange: the request or a reply said
  /// so, a stream was started, or a write failed.
  bool keep_alive() const { return keep_alive_; }

  /// Sends a complete response with `body` (Content-Type `content_type`, Content-Length) and
  /// `headers`; to a HEAD request the same head without the body. The connection stays open
  /// when the request allows it (HTTP/1.1 unless `Connection: close`, HTTP/1.0 only with
  /// `Connection: keep-alive`) and set_close() was not called; the reply says which.
  /// Returns false when the write failed (client gone).
  /// (`body` is an rvalue reference, not a value: GCC 12 mishandles class prvalues passed by
  /// value to a coroutine.)
  asio::awaitable<bool> Reply(unsigned status, std::string_view content_type, std::string&& body,
                              const Headers& headers = {});

  /// Starts a `text/event-stream` response (status 200) with `headers` (and
  /// `Cache-Control: no-cache` unless they set Cache-Control): chunked for HTTP/1.1,
  /// close-delimited for HTTP/1.0. The connection closes after the stream in both cases.
  asio::awaitable<bool> StartStream(const Headers& headers = {});
  /// Writes `data` to a started stream (one chunk, for HTTP/1.1); false when the client is
  /// gone. Empty data writes nothing (an empty chunk would end the stream).
  asio::awaitable<bool> WriteChunk(std::string_view data);
  /// Ends the stream: the last chunk for HTTP/1.1; for HTTP/1.0, shuts the sending side,
  /// which ends the body. The connection closes afterwards.
  asio::awaitable<bool> EndStream();

  /// Completes when the client closes its side or the connection breaks (EOF or error on a
  /// pending read). Bytes that arrive meanwhile (a pipelined request) end the watch as "not
  /// gone" after a peek: returns true when the client is gone (the connection then closes
  /// after this exchange), false when it sent data.
  /// Cancel it through the awaitable's cancellation (e.g. awaitable_operators ||).
  asio::awaitable<bool> WaitClientGone();

  /// WaitClientGone as a callback, for a watch started and stopped around every relayed
  /// request: no coroutine frame, and nothing posted to start it. Peeks one byte into `byte`
  /// (which must stay valid until `done` has run) and calls `done(gone)` on the socket's
  /// completion: true for EOF or an error, false when bytes came (pipelining). Not called when
  /// the watch was cancelled through `slot`, or when bytes were already buffered (nothing is
  /// started then). `done` must keep the cancellation signal behind `slot` alive: the handler
  /// clears the slot before it returns, so a later emit finds no stale operation. After a
  /// `done(true)` the caller must set_close(): Asio does not read again on its own from a
  /// socket that reported EOF (a next request's read would wait out the idle timeout).
  template <typename Done>
  void WatchClientGone(char& byte, asio::cancellation_slot slot, Done done) {
    if (buffer_.size() > 0) {
      return;
    }
    stream_.socket().async_receive(
        asio::buffer(&byte, 1), asio::ip::tcp::socket::message_peek,
        asio::bind_cancellation_slot(
            slot, [slot, done = std::move(done)](const boost::system::error_code& ec,
                                                 std::size_t n) mutable {
              slot.clear();
              if (ec != asio::error::operation_aborted) {
                done(ec || n == 0);
              }
            }));
  }

  /// Cancels the socket's pending operations (a write to a client that does not read, a
  /// watch): they complete with operation_aborted, and a write so cut marks the connection to
  /// close. For a deadline that must hold even against a client that stopped reading.
  void CancelPending() {
    boost::system::error_code ignored;
    stream_.socket().cancel(ignored);
  }

  /// Marks the connection to close after this exchange.
  void set_close() { keep_alive_ = false; }
  /// How long a write may wait for a client that does not read before it fails (30 s unless
  /// set): shortened for a last word after the request's own time ran out.
  void set_write_timeout(std::chrono::milliseconds timeout) { write_timeout_ = timeout; }

 private:
  using Buffers = std::array<asio::const_buffer, 3>;
  /// Writes all of `buffers` (advanced in place): without waiting as far as the socket takes
  /// it, the rest asynchronously under the write timeout. False on an error; the connection
  /// is then marked to close.
  asio::awaitable<bool> Write(Buffers& buffers);

  beast::tcp_stream& stream_;
  beast::flat_buffer& buffer_;
  const Request& request_;
  std::string& scratch_;
  std::chrono::milliseconds write_timeout_{std::chrono::seconds(30)};
  bool keep_alive_ = true;
  bool close_delimited_ = false;  // an HTTP/1.0 stream: the body ends when we close
};

/// Bounds of a lingering close: the most bytes read and discarded, the most time spent in all,
/// and the longest silence from the client.
struct LingerLimits {
  std::size_t discard_bytes_max = 0;
  std::chrono::milliseconds total{0};
  std::chrono::milliseconds idle{0};
};

/// Closes a connection whose request may still be arriving, after nginx's lingering_close:
/// shuts the sending side (the client reads the reply already written, then EOF), then reads
/// and discards what the client sends until the client closes, `limits.discard_bytes_max`
/// bytes have come (counting those `buffer` holds; it is cleared), `limits.total` has passed
/// or the client was silent for `limits.idle`; then closes the socket. Closing at once would
/// make the kernel answer the unread bytes with a reset: a client still writing its body
/// would see a broken pipe, never the reply. Takes at most `limits.total` (plus one
/// scheduling delay).
asio::awaitable<void> LingeringClose(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                     const LingerLimits& limits);

}  // namespace spillway::net
