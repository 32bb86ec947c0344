// libFuzzer target: HTTP/1.1 request parsing as `spillway serve` configures it
// (net/http_server.cc, HttpServer::Session): one flat_buffer per connection, a fresh
// request_parser<string_body> per keep-alive request with the server's body limit and
// net::kMaxHeaderBytes, and the same outcome for each read error (413, 431/400, or close).
// Each request that parses is inspected as ApiHandler does without a socket: its method,
// target, Authorization and X-Priority-Class fields and keep-alive are read, and a POST body
// goes through api::ParseCompletionRequest (request_checks.h).
//
// Not reached: the route table, the Bearer-token and X-Priority-Class parsing live in
// api_handler.cc's anonymous namespace, behind a live EngineService.
//
// Input: byte 0 bit 0 chooses the body limit (the config minimum, 1024, or the default 1 MiB);
// byte 0 >> 1 and byte 1 are the sizes of alternate reads (0 = all that is left), so requests
// arrive split at many points, as over TCP; the rest is the byte stream of one connection.

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/system_error.hpp>

#include "api/request_parser.h"
#include "core/check.h"
#include "net/http_server.h"
#include "request_checks.h"

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using boost::system::error_code;

/// Keep-alive requests parsed per input, at most (the server has no such cap; the input's
/// length bounds it there).
constexpr int kMaxRequests = 64;
/// The smallest server.max_body_bytes the config accepts (server_config.cc).
constexpr std::size_t kMinBodyLimit = 1024;

/// A SyncReadStream over the input: reads return at most the next of two alternating sizes,
/// then end of stream, as a client's TCP segments would.
class SegmentedStream {
 public:
  SegmentedStream(std::string_view data, std::size_t first_bytes, std::size_t second_bytes)
      : data_(data), sizes_{first_bytes, second_bytes} {}

  template <class MutableBufferSequence>
  std::size_t read_some(const MutableBufferSequence& buffers, error_code& ec) {
    if (data_.empty()) {
      ec = asio::error::eof;
      return 0;
    }
    const std::size_t limit = sizes_[next_++ % 2];
    const std::size_t take = limit == 0 ? data_.size() : std::min(limit, data_.size());
    const std::size_t n = asio::buffer_copy(buffers, asio::buffer(data_.data(), take));
    data_.remove_prefix(n);
    ec = {};
    return n;
  }

  template <class MutableBufferSequence>
  std::size_t read_some(const MutableBufferSequence& buffers) {
    error_code ec;
    const std::size_t n = read_some(buffers, ec);
    if (ec) {
      throw boost::system::system_error(ec);
    }
    return n;
  }

 private:
  std::string_view data_;
  std::size_t sizes_[2];
  std::size_t next_ = 0;
};

/// What the server does with a read error, as HttpServer::Session decides it.
enum class Outcome { kHandle, kTooLarge413, kBadRequest, kClose };

Outcome Classify(const error_code& ec) {
  if (!ec) {
    return Outcome::kHandle;
  }
  if (ec == http::error::body_limit) {
    return Outcome::kTooLarge413;
  }
  if (ec.category() == make_error_code(http::error::bad_target).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message) {
    return Outcome::kBadRequest;  // 431 for header_limit, else 400
  }
  return Outcome::kClose;
}

/// The request-level reads ApiHandler makes before any engine work.
void Inspect(const http::request<http::string_body>& request, std::size_t body_limit) {
  SPILLWAY_CHECK(request.body().size() <= body_limit);
  SPILLWAY_CHECK(request.version() == 10 || request.version() == 11);
  const auto target = request.target();
  SPILLWAY_CHECK(!target.empty());
  if (const auto length = request.find(http::field::content_length);
      length != request.end() && !request.chunked()) {
    // Leading zeros are allowed ("007"), so compare numbers, not text.
    const auto text = length->value();
    std::uint64_t n = 0;
    const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (err == std::errc{} && end == text.data() + text.size()) {
      SPILLWAY_CHECK(n == request.body().size());
    }
  }
  const auto auth = request[http::field::authorization];
  const auto priority = request["X-Priority-Class"];
  SPILLWAY_CHECK(auth.size() + priority.size() <= spillway::net::kMaxHeaderBytes);
  if (request.method() == http::verb::post) {
    const bool chat =
        std::string_view(target.data(), target.size()).find("/chat/") != std::string_view::npos;
    spillway::fuzz::ParseAndCheckRequest(
        request.body(),
        chat ? spillway::api::Endpoint::kChatCompletions : spillway::api::Endpoint::kCompletions,
        {});
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) {
    return 0;
  }
  const std::size_t body_limit =
      (data[0] & 1) != 0 ? kMinBodyLimit : spillway::net::HttpServerOptions{}.max_body_bytes;
  SegmentedStream stream(std::string_view(reinterpret_cast<const char*>(data + 2), size - 2),
                         data[0] >> 1, data[1]);
  boost::beast::flat_buffer buffer;
  for (int i = 0; i < kMaxRequests; ++i) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(body_limit);
    parser.header_limit(spillway::net::kMaxHeaderBytes);
    error_code ec;
    http::read(stream, buffer, parser, ec);
    if (Classify(ec) != Outcome::kHandle) {
      break;  // the server answers 413 / 431 / 400 or just closes; the connection ends
    }
    SPILLWAY_CHECK(parser.is_done());
    Inspect(parser.get(), body_limit);
    if (!parser.get().keep_alive()) {
      break;
    }
  }
  return 0;
}
