#include "net/http_get.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <chrono>

namespace spillway::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

asio::awaitable<GetResult> HttpGet(const Endpoints& endpoints, const Target& target,
                                   const std::string& path, const std::string& authorization,
                                   Seconds timeout_s) {
  constexpr auto kUse = asio::as_tuple(asio::use_awaitable);
  GetResult out;
  beast::tcp_stream stream(co_await asio::this_coro::executor);
  stream.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(timeout_s)));
  auto [connect_ec, endpoint] = co_await stream.async_connect(endpoints, kUse);
  if (connect_ec) {
    out.error = "connect: " + connect_ec.message();
    co_return out;
  }
  http::request<http::empty_body> req{http::verb::get, target.Path(path), 11};
  req.set(http::field::host, target.host_header);
  req.set(http::field::user_agent, "spillway-bench");
  if (!authorization.empty()) {
    req.set(http::field::authorization, authorization);
  }
  req.keep_alive(false);
  auto [write_ec, written] = co_await http::async_write(stream, req, kUse);
  if (write_ec) {
    out.error = "write: " + write_ec.message();
    co_return out;
  }
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(16 << 20);
  auto [read_ec, read] = co_await http::async_read(stream, buffer, parser, kUse);
  if (read_ec) {
    out.error = "read: " + read_ec.message();
    co_return out;
  }
  out.status = static_cast<int>(parser.get().result_int());
  out.body = std::move(parser.get().body());
  co_return out;
}

Endpoints Resolve(asio::io_context& ioc, const Target& target) {
  asio::ip::tcp::resolver resolver(ioc);
  boost::system::error_code ec;
  const auto results = resolver.resolve(target.host, target.port, ec);
  if (ec || results.empty()) {
    throw std::runtime_error("cannot resolve " + target.host + ":" + target.port + ": " +
                             ec.message());
  }
  Endpoints out;
  for (const auto& r : results) {
    out.push_back(r.endpoint());
  }
  return out;
}

GetResult HttpGetNow(const Endpoints& endpoints, const Target& target, const std::string& path,
                     Seconds timeout_s) {
  asio::io_context ioc;
  GetResult r;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        r = co_await HttpGet(endpoints, target, path, "", timeout_s);
      },
      asio::detached);
  ioc.run();
  return r;
}

}  // namespace spillway::net
