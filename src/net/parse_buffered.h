#pragma once
// Feeds a Beast parser what its read buffer already holds, without another asynchronous read:
// the body of a small message arrives with its head (one segment on loopback and on most
// networks), and an asynchronous read of bytes already in memory still costs a round through
// the io_context.

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/system/error_code.hpp>

namespace spillway::net {

/// Parses what `buffer` holds into `parser` (a Beast http::parser whose head was read), and
/// consumes it. Stops once the message is done, the buffer is empty or the parser needs more
/// (ec cleared then); any other parse error is left in `ec`.
template <typename Parser>
void ParseBuffered(Parser& parser, boost::beast::flat_buffer& buffer,
                   boost::system::error_code& ec) {
  while (!parser.is_done() && buffer.size() > 0) {
    const std::size_t used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == boost::beast::http::error::need_more) {
      ec = {};
      return;
    }
    if (ec || used == 0) {
      return;
    }
  }
}

}  // namespace spillway::net
