#include "net/http_connection.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <chrono>
#include <tuple>

namespace spillway::net {
namespace {

constexpr std::size_t kDiscardChunkBytes = 64 * 1024;  // one read of a lingering close
constexpr auto kUse = asio::as_tuple(asio::use_awaitable);
constexpr std::string_view kCrlf = "\r\n";
constexpr std::string_view kLastChunk = "0\r\n\r\n";

asio::const_buffer Buffer(std::string_view s) { return {s.data(), s.size()}; }

// Drops the first `n` bytes of `buffers`.
void Advance(std::array<asio::const_buffer, 3>& buffers, std::size_t n) {
  for (asio::const_buffer& b : buffers) {
    const std::size_t take = std::min(n, b.size());
    b += take;
    n -= take;
  }
}

}  // namespace

HttpConnection::HttpConnection(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                               const Request& request, std::string& scratch)
    : stream_(stream),
      buffer_(buffer),
      request_(request),
      scratch_(scratch),
      keep_alive_(request.keep_alive()) {}

std::string_view HttpConnection::target() const {
  const auto t = request_.target();
  return {t.data(), t.size()};
}

asio::awaitable<bool> HttpConnection::Write(Buffers& buffers) {
  auto& socket = stream_.socket();
  boost::system::error_code ec;
  if (!socket.non_blocking()) {
    socket.non_blocking(true, ec);
  }
  if (!ec) {
    // One gathered send; Asio's asynchronous write would try the same send first, but through
    // a composed operation and, with a timeout, a timer per write.
    const std::size_t n = socket.write_some(buffers, ec);
    Advance(buffers, n);
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
      ec = {};
    }
  }
  if (!ec && asio::buffer_size(buffers) > 0) {
    stream_.expires_after(write_timeout_);
    auto [write_ec, n] = co_await asio::async_write(stream_, buffers, kUse);
    stream_.expires_never();
    ec = write_ec;
  }
  if (ec) {
    keep_alive_ = false;
  }
  co_return !ec;
}

asio::awaitable<bool> HttpConnection::Reply(unsigned status, std::string_view content_type,
                                            std::string&& body, const Headers& headers) {
  ResponseFraming framing;
  framing.version = request_.version() == 10 ? 10 : 11;
  framing.content_length = body.size();
  framing.keep_alive = keep_alive_;
  scratch_.clear();
  AppendResponseHead(&scratch_, status, content_type, framing, headers);
  // HEAD: keep Content-Length, send no body (RFC 9110 §9.3.2).
  const bool head = request_.method() == http::verb::head;
  Buffers buffers = {Buffer(scratch_), head ? asio::const_buffer() : Buffer(body)};
  co_return co_await Write(buffers);
}

asio::awaitable<bool> HttpConnection::StartStream(const Headers& headers) {
  ResponseFraming framing;
  framing.version = request_.version() == 10 ? 10 : 11;
  framing.chunked = framing.version == 11;
  framing.keep_alive = false;
  close_delimited_ = !framing.chunked;
  keep_alive_ = false;
  Headers all = headers;
  const bool cache_control_given = std::any_of(all.begin(), all.end(), [](const auto& h) {
    return beast::iequals(h.first, "Cache-Control");
  });
  if (!cache_control_given) {
    all.emplace(all.begin(), "Cache-Control", "no-cache");
  }
  scratch_.clear();
  AppendResponseHead(&scratch_, 200, "text/event-stream", framing, all);
  Buffers buffers = {Buffer(scratch_)};
  co_return co_await Write(buffers);
}

asio::awaitable<bool> HttpConnection::WriteChunk(std::string_view data) {
  if (data.empty()) {
    co_return true;
  }
  if (close_delimited_) {
    Buffers buffers = {Buffer(data)};
    co_return co_await Write(buffers);
  }
  scratch_.clear();
  AppendChunkSize(&scratch_, data.size());
  Buffers buffers = {Buffer(scratch_), Buffer(data), Buffer(kCrlf)};
  co_return co_await Write(buffers);
}

asio::awaitable<bool> HttpConnection::EndStream() {
  if (close_delimited_) {
    boost::system::error_code ec;
    stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
    co_return !ec;
  }
  Buffers buffers = {Buffer(kLastChunk)};
  co_return co_await Write(buffers);
}

asio::awaitable<bool> HttpConnection::WaitClientGone() {
  if (buffer_.size() > 0) {
    co_return false;  // the client already sent more (pipelining): it is there
  }
  // A one-byte peek rather than a wait for readability: the reactor queues a receive without a
  // system call when the socket was just drained (the request was read to its end), where a
  // wait re-arms epoll (epoll_ctl) every time, one call per request for nothing.
  char byte = 0;
  auto [ec, n] = co_await stream_.socket().async_receive(asio::buffer(&byte, 1),
                                                         asio::ip::tcp::socket::message_peek, kUse);
  // After a cancellation the connection (and the socket) may already be gone: touch nothing.
  const auto state = co_await asio::this_coro::cancellation_state;
  if (ec == asio::error::operation_aborted || state.cancelled() != asio::cancellation_type::none) {
    co_return false;
  }
  // Bytes (a pipelined request): not gone. EOF, a reset or any other error: gone, and the
  // connection closes after this exchange: nothing more will come, and Asio's reactor does not
  // try a read again on a socket that reported EOF until epoll wakes it, which, the FIN having
  // come already, it never does (a next request's read would wait for the idle timeout).
  const bool gone = ec || n == 0;
  if (gone) {
    keep_alive_ = false;
  }
  co_return gone;
}

asio::awaitable<void> LingeringClose(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                     const LingerLimits& limits) {
  boost::system::error_code ec;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
  std::size_t discarded = buffer.size();
  buffer.clear();
  const auto give_up = std::chrono::steady_clock::now() + limits.total;
  while (!ec && discarded < limits.discard_bytes_max) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        give_up - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      break;
    }
    // On expiry tcp_stream cancels the read and closes the socket.
    stream.expires_after(std::min(limits.idle, left));
    std::size_t n = 0;
    const std::size_t want = std::min(kDiscardChunkBytes, limits.discard_bytes_max - discarded);
    std::tie(ec, n) = co_await stream.async_read_some(buffer.prepare(want), kUse);
    discarded += n;  // never committed: the bytes are dropped
  }
  // Ended by EOF (a clean close), a reset, a bound or a timeout: unread bytes, if any, get the
  // reset they would have got at once, but the reply has had its chance to arrive.
  stream.expires_never();
  stream.socket().close(ec);
}

}  // namespace spillway::net
