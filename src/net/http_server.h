#pragma once
// A small HTTP/1.1 server on Boost.Beast with C++20 coroutines (after Beast 1.81's
// advanced/server-flex-awaitable example): an accept loop, one coroutine per connection with
// keep-alive (TCP_NODELAY on), a header/body deadline against slow clients, a body size limit
// (413) and a cap on concurrent connections (beyond it: an immediate 503 and close, never a
// hang). A reply that closes the connection before the request was read to its end (413, 400,
// 431) is followed by a bounded lingering close (LingeringClose), so that a client still writing
// its body gets the reply, not a reset. Replies the server makes on its own, before a request
// reaches the handler, are reported through HttpServerOptions::on_connection_reply.
//
// A request may be refused from its head alone (HeadHandler: its method, target and headers),
// before its body is read or parsed, as nginx's limit_req and Envoy's rate limit filter do:
// then the body is read and dropped unparsed, so the connection stays open for the next
// request (nginx discards a refused request's body the same way), and a client that sent
// "Expect: 100-continue" gets the refusal instead of the 100 and the connection closes.

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "net/http_connection.h"

namespace spillway::net {

/// Largest request head (request line and headers) a connection accepts; beyond it: 431.
inline constexpr std::uint32_t kMaxHeaderBytes = 64 * 1024;

/// Bounds of the lingering close after a 413, 400 or 431 (nginx: lingering_time 30 s,
/// lingering_timeout 5 s, no byte bound). The connection still counts towards
/// max_connections meanwhile. It reads and discards at most kLingerSlackBytes plus the body
/// still announced, which is the request's Content-Length when known, else max_body_bytes (a
/// chunked body, a malformed or oversized head), counted up to kLingerAnnouncedBytesMax; for
/// at most kLingerTotalMs in all, and gives up after kLingerIdleMs without a byte.
inline constexpr std::size_t kLingerSlackBytes = 1 << 20;
inline constexpr std::size_t kLingerAnnouncedBytesMax = 16 << 20;
inline constexpr std::int64_t kLingerTotalMs = 5000;
inline constexpr std::int64_t kLingerIdleMs = 2000;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8000;  ///< 0 = an ephemeral port (see HttpServer::port)
  std::size_t max_body_bytes = 1 << 20;
  double header_timeout_s = 10;  ///< the whole request must arrive within this
  double idle_timeout_s = 60;    ///< between requests on a keep-alive connection
  std::int32_t max_connections = 1024;
  /// The io_context runs on one thread (net::IoThreadCount): each connection runs on it
  /// directly instead of on a strand of its own (one thread serializes them already; a strand
  /// would lock and dispatch on every operation).
  bool one_thread = false;
  /// Body and headers of the 503 sent when max_connections is reached (JSON; the server fills
  /// them from the overload contract's too_many_connections row).
  std::string overload_body = "{}";
  Headers overload_headers = {{"Retry-After", "1"}, {"X-Overload-Reason", "too_many_connections"}};
  /// Body of the 413 sent when a body exceeds max_body_bytes (JSON).
  std::string too_large_body = "{}";
  /// Bodies of the 400 for a malformed HTTP request and the 431 for oversized headers (JSON).
  std::string bad_request_body = "{}";
  std::string headers_too_large_body = "{}";
  /// Called with the status of every reply the server makes on its own, without the handler:
  /// 400 (malformed HTTP), 413 (body over max_body_bytes), 431 (headers over 64 KiB), 503
  /// (max_connections reached), and 408 for a request whose bytes had started to arrive when
  /// header_timeout_s / idle_timeout_s passed (nothing is sent then: the socket is closed at
  /// the deadline). An idle keep-alive connection timing out is no reply and is not reported.
  /// Runs on an I/O thread, possibly on several at once; must not throw. May be empty.
  std::function<void(unsigned status)> on_connection_reply;
};

/// A reply decided from a request's head alone (HttpServer::HeadHandler): a JSON body.
struct EarlyReply {
  unsigned status = 0;
  std::string body;
  Headers headers;
};

class HttpServer {
 public:
  /// Handles one request; must leave a response written (or the stream ended).
  using Handler = std::function<asio::awaitable<void>(HttpConnection&)>;
  /// Sees each request's head (the message before its body) first; a reply it returns is sent
  /// instead of calling the Handler. Synchronous and short: runs on an I/O thread, possibly on
  /// several at once; must not throw.
  using HeadHandler = std::function<std::optional<EarlyReply>(const Request& head)>;

  HttpServer(asio::io_context& ioc, HttpServerOptions options, Handler handler,
             HeadHandler head_handler = {});

  /// Binds and starts accepting. Throws std::runtime_error naming host:port on failure.
  void Start();
  /// Stops accepting new connections (in-flight ones continue).
  void StopAccepting();
  /// The bound port (useful with port 0).
  std::uint16_t port() const { return port_; }
  std::int32_t active_connections() const { return active_->load(); }

 private:
  asio::awaitable<void> AcceptLoop();
  asio::awaitable<void> Session(asio::ip::tcp::socket socket);
  asio::awaitable<void> RefuseBusy(asio::ip::tcp::socket socket);
  void Count(unsigned status) const;

  asio::io_context& ioc_;
  HttpServerOptions options_;
  Handler handler_;
  HeadHandler head_handler_;
  asio::ip::tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  std::shared_ptr<std::atomic<std::int32_t>> active_ =
      std::make_shared<std::atomic<std::int32_t>>(0);
};

}  // namespace spillway::net
