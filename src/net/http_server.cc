#include "net/http_server.h"

#include <algorithm>
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/read.hpp>
#include <charconv>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <tuple>

#include "net/parse_buffered.h"
#include "net/read_deadline.h"

namespace spillway::net {
namespace {

constexpr auto kUse = asio::as_tuple(asio::use_awaitable);

// At least 1 ms: a timeout the config allows (any positive value) never truncates to none.
std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(std::max<std::int64_t>(1, std::llround(seconds * 1000)));
}

// The bounds of a lingering close after an early reply to a request announcing a body of
// `announced_bytes` (see kLingerSlackBytes).
LingerLimits Linger(std::uint64_t announced_bytes) {
  LingerLimits limits;
  limits.discard_bytes_max = kLingerSlackBytes + static_cast<std::size_t>(std::min<std::uint64_t>(
                                                     announced_bytes, kLingerAnnouncedBytesMax));
  limits.total = std::chrono::milliseconds(kLingerTotalMs);
  limits.idle = std::chrono::milliseconds(kLingerIdleMs);
  return limits;
}

// The body length `request` announces in Content-Length, or `otherwise` without one (chunked).
// (The parser's content_length() may not be asked when the limit failed the header.)
std::uint64_t AnnouncedBodyBytes(const Request& request, std::uint64_t otherwise) {
  const auto value = request[http::field::content_length];
  std::uint64_t length = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
  return ec == std::errc{} && end != value.data() ? length : otherwise;
}

using RequestParser = http::request_parser<http::string_body>;

// Reads a request's head into `parser`: parses what `buffer` already holds (a pipelined
// request needs no read), then reads from the socket directly until the head is complete, an
// error, EOF, or `deadline` cancels the read. Errors are those of Beast's async_read_header:
// the parser's (bad request, header_limit), end_of_stream for EOF before any byte of a
// request, partial_message for EOF within one, beast::error::timeout for the deadline.
// (Beast's composed read through tcp_stream costs a timer started and cancelled and four
// layers of handlers per request; this is one reactor operation when the bytes are not there
// yet, none when they are.)
asio::awaitable<boost::system::error_code> ReadHead(asio::ip::tcp::socket& socket,
                                                    beast::flat_buffer& buffer,
                                                    RequestParser& parser,
                                                    const ReadDeadline& deadline) {
  constexpr std::size_t kReadBytes = 4096;
  boost::system::error_code ec;
  for (;;) {
    if (buffer.size() > 0) {
      const std::size_t used = parser.put(buffer.data(), ec);
      buffer.consume(used);
      if (ec == http::error::need_more) {
        ec = {};
      } else if (ec || parser.is_header_done()) {
        co_return ec;
      }
    }
    const std::size_t room = std::max(kReadBytes, buffer.capacity() - buffer.size());
    auto [read_ec, n] = co_await socket.async_read_some(buffer.prepare(room), kUse);
    buffer.commit(n);
    if (deadline.expired()) {
      co_return beast::error::timeout;
    }
    if (read_ec == asio::error::eof) {
      co_return parser.got_some() || buffer.size() > 0 ? http::error::partial_message
                                                       : http::error::end_of_stream;
    }
    if (read_ec) {
      co_return read_ec;
    }
  }
}

// Counts a connection for as long as it lives. Holds the counter by shared ownership: session
// frames still pending when the io_context is destroyed outlive the HttpServer.
struct ConnectionSlot {
  std::shared_ptr<std::atomic<std::int32_t>> active;
  explicit ConnectionSlot(std::shared_ptr<std::atomic<std::int32_t>> a) : active(std::move(a)) {
    ++*active;
  }
  ~ConnectionSlot() { --*active; }
  ConnectionSlot(const ConnectionSlot&) = delete;
  ConnectionSlot& operator=(const ConnectionSlot&) = delete;
};

}  // namespace

HttpServer::HttpServer(asio::io_context& ioc, HttpServerOptions options, Handler handler,
                       HeadHandler head_handler)
    : ioc_(ioc),
      options_(std::move(options)),
      handler_(std::move(handler)),
      head_handler_(std::move(head_handler)),
      acceptor_(asio::make_strand(ioc)) {}  // AcceptLoop and StopAccepting share this strand

void HttpServer::Start() {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(options_.host, ec);
  if (ec) {
    throw std::runtime_error("invalid listen address '" + options_.host + "': " + ec.message());
  }
  const asio::ip::tcp::endpoint endpoint(address, options_.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) {
    acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  }
  if (!ec) {
    acceptor_.bind(endpoint, ec);
  }
  if (!ec) {
    acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  }
  if (ec) {
    throw std::runtime_error("cannot listen on " + options_.host + ":" +
                             std::to_string(options_.port) + ": " + ec.message());
  }
  port_ = acceptor_.local_endpoint().port();
  asio::co_spawn(acceptor_.get_executor(), AcceptLoop(), asio::detached);
}

void HttpServer::StopAccepting() {
  // The acceptor is not thread-safe: close it on its strand, never beside AcceptLoop.
  asio::post(acceptor_.get_executor(), [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
  });
}

asio::awaitable<void> HttpServer::AcceptLoop() {
  for (;;) {
    const asio::any_io_executor on = options_.one_thread
                                         ? asio::any_io_executor(ioc_.get_executor())
                                         : asio::any_io_executor(asio::make_strand(ioc_));
    auto [ec, socket] = co_await acceptor_.async_accept(on, kUse);
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) {
      co_return;
    }
    if (ec) {
      continue;  // e.g. EMFILE: keep serving the connections we have
    }
    const auto executor = socket.get_executor();
    if (active_->load() >= options_.max_connections) {
      asio::co_spawn(executor, RefuseBusy(std::move(socket)), asio::detached);
    } else {
      asio::co_spawn(executor, Session(std::move(socket)), asio::detached);
    }
  }
}

void HttpServer::Count(unsigned status) const {
  if (options_.on_connection_reply) {
    options_.on_connection_reply(status);
  }
}

asio::awaitable<void> HttpServer::RefuseBusy(asio::ip::tcp::socket socket) {
  // Answer without reading the request: the point is to be fast and cheap.
  Count(503);
  ResponseFraming framing;
  framing.content_length = options_.overload_body.size();
  framing.keep_alive = false;
  std::string head;
  AppendResponseHead(&head, 503, "application/json", framing, options_.overload_headers);
  const std::array<asio::const_buffer, 2> buffers = {asio::buffer(head),
                                                     asio::buffer(options_.overload_body)};
  beast::tcp_stream stream(std::move(socket));
  stream.expires_after(std::chrono::seconds(2));
  co_await asio::async_write(stream, buffers, kUse);
  boost::system::error_code ec;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
}

asio::awaitable<void> HttpServer::Session(asio::ip::tcp::socket socket) {
  ConnectionSlot slot(active_);  // copies the shared counter
  {
    // Replies and SSE events are single writes that must leave at once, not wait for the
    // client's ACK of the previous one (Nagle with delayed ACKs costs up to 40 ms a write).
    boost::system::error_code ec;
    socket.set_option(asio::ip::tcp::no_delay(true), ec);
  }
  beast::tcp_stream stream(std::move(socket));
  const auto head_deadline = std::make_shared<ReadDeadline>(stream.socket());
  struct DetachOnExit {
    ReadDeadline& deadline;
    ~DetachOnExit() { deadline.Detach(); }
  } detach{*head_deadline};
  beast::flat_buffer buffer;
  std::string scratch;  // response heads, reused across the connection's requests
  scratch.reserve(512);
  bool first = true;
  bool linger = false;  // an early reply was sent; the request may still be arriving
  std::uint64_t announced_bytes = options_.max_body_bytes;  // the body the client may send
  for (;;) {
    RequestParser parser;
    parser.body_limit(options_.max_body_bytes);
    parser.header_limit(kMaxHeaderBytes);
    // One deadline for the whole request, headers and body: a slow or stalled client is cut
    // off (slowloris); between keep-alive requests the idle timeout applies instead.
    const auto deadline = std::chrono::steady_clock::now() +
                          Millis(first ? options_.header_timeout_s : options_.idle_timeout_s);
    head_deadline->Set(deadline);
    auto ec = co_await ReadHead(stream.socket(), buffer, parser, *head_deadline);
    head_deadline->Clear();
    std::size_t n = 0;
    // The body's reads (and a 100 Continue), below, under the same deadline; tcp_stream's
    // timer is set only for them, the common request whose body came with its head needs none.
    bool stream_timed = false;
    const auto until_deadline = [&] {
      stream.expires_at(deadline);
      stream_timed = true;
    };
    // Refused from the head alone: the body, if any, is read below but never parsed.
    std::optional<EarlyReply> early;
    if (!ec && head_handler_) {
      early = head_handler_(parser.get());
    }
    if (!ec && !parser.is_done()) {
      // A client that sent "Expect: 100-continue" waits for this before sending the body
      // (curl, for bodies over 1 MiB, waits a second without it). A body over the limit has
      // already failed above with body_limit (Content-Length is checked with the header).
      // (Never to an HTTP/1.0 client, which does not know 1xx replies: RFC 9110 section 15.2.)
      const bool expects_continue =
          parser.get().version() >= 11 &&
          beast::iequals(parser.get()[http::field::expect], "100-continue");
      if (expects_continue && early.has_value()) {
        // The refusal is its final answer instead of the 100 (RFC 9110 section 10.1.1); it
        // may still send the body, which the lingering close reads and drops.
        HttpConnection conn(stream, buffer, parser.get(), scratch);
        conn.set_close();
        linger = co_await conn.Reply(early->status, "application/json", std::move(early->body),
                                     early->headers);
        announced_bytes = AnnouncedBodyBytes(parser.get(), options_.max_body_bytes);
        break;
      }
      if (expects_continue) {
        static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
        until_deadline();
        auto [write_ec, written] =
            co_await asio::async_write(stream, asio::buffer(kContinue), kUse);
        ec = write_ec;
      }
      if (!ec) {
        ParseBuffered(parser, buffer, ec);  // a small body came with its head: no more reads
      }
      if (!ec && !parser.is_done() && early.has_value()) {
        // Refused while its body is still on its way: answered now, as nginx does, and the
        // rest of the body read and dropped below (a body that stalls closes the connection
        // at the deadline, the request answered and counted once).
        HttpConnection conn(stream, buffer, parser.get(), scratch);
        const bool sent = co_await conn.Reply(early->status, "application/json",
                                              std::move(early->body), early->headers);
        early.reset();
        if (!sent) {
          break;
        }
        until_deadline();
        std::tie(ec, n) = co_await http::async_read(stream, buffer, parser, kUse);
        stream.expires_never();
        first = false;
        if (ec == http::error::body_limit) {  // a chunked body over the limit: drop the rest
          linger = true;
          announced_bytes = AnnouncedBodyBytes(parser.get(), options_.max_body_bytes);
        }
        if (ec || !conn.keep_alive()) {
          break;
        }
        continue;
      }
      if (!ec && !parser.is_done()) {
        until_deadline();
        std::tie(ec, n) = co_await http::async_read(stream, buffer, parser, kUse);
      }
    }
    if (stream_timed) {
      stream.expires_never();
    }
    first = false;
    if (ec == http::error::body_limit) {
      // The header is complete (the limit applies to the body): answer in its HTTP version.
      // With a Content-Length the limit was checked from the header, before any 100 Continue:
      // a client that sent "Expect: 100-continue" gets the 413 as its final status instead
      // (RFC 9110 section 10.1.1) and may still send the body, as may any other client.
      Count(413);
      HttpConnection conn(stream, buffer, parser.get(), scratch);
      conn.set_close();
      linger = co_await conn.Reply(413, "application/json", std::string(options_.too_large_body));
      announced_bytes = AnnouncedBodyBytes(parser.get(), options_.max_body_bytes);
      break;
    }
    if (ec && ec.category() == make_error_code(http::error::bad_target).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message) {
      // A malformed request gets an answer before the connection closes (431 for headers
      // over the limit, else 400); EOF, timeouts and resets just close. The rest of the
      // request (a body, say) may still be on its way: linger as after a 413.
      const bool too_big = ec == http::error::header_limit;
      Count(too_big ? 431 : 400);
      Request dummy;
      dummy.version(11);
      HttpConnection conn(stream, buffer, dummy, scratch);
      conn.set_close();
      linger = co_await conn.Reply(
          too_big ? 431 : 400, "application/json",
          std::string(too_big ? options_.headers_too_large_body : options_.bad_request_body));
      break;
    }
    if (ec == beast::error::timeout && (parser.got_some() || buffer.size() > 0)) {
      Count(408);  // a request cut off by its deadline (tcp_stream closed the socket)
    }
    if (ec) {
      break;  // EOF, timeout or reset: close the connection
    }
    HttpConnection conn(stream, buffer, parser.get(), scratch);
    if (early.has_value()) {
      co_await conn.Reply(early->status, "application/json", std::move(early->body),
                          early->headers);
    } else {
      co_await handler_(conn);
    }
    if (!conn.keep_alive()) {
      break;
    }
  }
  if (linger) {
    co_await LingeringClose(stream, buffer, Linger(announced_bytes));
    co_return;
  }
  boost::system::error_code ec;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
}

}  // namespace spillway::net
