#include "net/http_connection.h"

#include <sys/socket.h>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/write.hpp>

#include <cerrno>
#include <chrono>

namespace spillway::net {
namespace {

constexpr auto kWriteTimeout = std::chrono::seconds(30);
constexpr auto kUse = asio::as_tuple(asio::use_awaitable);

}  // namespace

std::string_view HttpConnection::target() const {
  const auto t = request_.target();
  return {t.data(), t.size()};
}

asio::awaitable<bool> HttpConnection::Reply(unsigned status, std::string_view content_type,
                                            std::string&& body, const Headers& headers) {
  http::response<http::string_body> res{static_cast<http::status>(status), request_.version()};
  res.set(http::field::server, "spillway");
  res.set(http::field::content_type, content_type);
  for (const auto& [name, value] : headers) {
    res.set(name, value);
  }
  res.keep_alive(keep_alive_ && request_.keep_alive());
  res.body() = std::move(body);
  res.prepare_payload();
  if (request_.method() == http::verb::head) {
    res.body().clear();  // keep Content-Length, send no body (RFC 9110 §9.3.2)
  }
  stream_.expires_after(kWriteTimeout);
  auto [ec, n] = co_await http::async_write(stream_, res, kUse);
  stream_.expires_never();
  if (ec) {
    keep_alive_ = false;
  }
  co_return !ec;
}

asio::awaitable<bool> HttpConnection::StartStream(const Headers& headers) {
  http::response<http::empty_body> res{http::status::ok, request_.version()};
  res.set(http::field::server, "spillway");
  res.set(http::field::content_type, "text/event-stream");
  res.set(http::field::cache_control, "no-cache");
  for (const auto& [name, value] : headers) {
    res.set(name, value);
  }
  res.chunked(true);
  res.keep_alive(false);
  keep_alive_ = false;
  streaming_ = true;
  http::response_serializer<http::empty_body> sr{res};
  stream_.expires_after(kWriteTimeout);
  auto [ec, n] = co_await http::async_write_header(stream_, sr, kUse);
  stream_.expires_never();
  co_return !ec;
}

asio::awaitable<bool> HttpConnection::WriteChunk(std::string_view data) {
  stream_.expires_after(kWriteTimeout);
  auto [ec, n] = co_await asio::async_write(stream_, http::make_chunk(asio::buffer(data)), kUse);
  stream_.expires_never();
  co_return !ec;
}

asio::awaitable<bool> HttpConnection::EndStream() {
  stream_.expires_after(kWriteTimeout);
  auto [ec, n] = co_await asio::async_write(stream_, http::make_chunk_last(), kUse);
  stream_.expires_never();
  co_return !ec;
}

asio::awaitable<bool> HttpConnection::WaitClientGone() {
  if (buffer_.size() > 0) {
    co_return false;  // the client already sent more (pipelining): it is there
  }
  auto& socket = stream_.socket();
  const int fd = socket.native_handle();
  for (;;) {
    auto [ec] = co_await socket.async_wait(asio::ip::tcp::socket::wait_read, kUse);
    // After a cancellation the connection (and `socket`) may already be gone: touch nothing.
    const auto state = co_await asio::this_coro::cancellation_state;
    if (ec == asio::error::operation_aborted ||
        state.cancelled() != asio::cancellation_type::none) {
      co_return false;
    }
    if (ec) {
      co_return true;
    }
    // Readable: EOF (0 bytes), a reset, or data. Peek without blocking: the readiness can be
    // stale (the bytes were already read), and a blocking peek would stall this I/O thread.
    char byte = 0;
    const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) {
      co_return false;
    }
    if (n == 0) {
      co_return true;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      co_return true;
    }
  }
}

}  // namespace spillway::net
