// The gateway's idle upstream connections (gateway/connection_cache.h): kept as registered Asio
// sockets, handed out most recent first, bounded, and those the endpoint closed dropped once
// they have been idle long enough to be peeked at.

#include "gateway/connection_cache.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <optional>
#include <utility>

#include <gtest/gtest.h>

namespace spillway::gateway {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

/// Both ends of loopback TCP connections, made synchronously.
class LoopbackPairs {
 public:
  LoopbackPairs() : acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {}

  /// A connected client socket; its server end is kept in `peer`.
  tcp::socket Connect(std::optional<tcp::socket>* peer) {
    tcp::socket client(ioc_);
    client.connect(acceptor_.local_endpoint());
    peer->emplace(acceptor_.accept());
    return client;
  }

 private:
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
};

TEST(ConnectionCacheTest, HandsOutTheMostRecentConnectionFirstAndNoneWhenEmpty) {
  LoopbackPairs pairs;
  std::optional<tcp::socket> peer_a;
  std::optional<tcp::socket> peer_b;
  tcp::socket a = pairs.Connect(&peer_a);
  tcp::socket b = pairs.Connect(&peer_b);
  const int fd_a = a.native_handle();
  const int fd_b = b.native_handle();
  ConnectionCache cache;
  EXPECT_FALSE(cache.Take().has_value());
  cache.Give(std::move(a));
  cache.Give(std::move(b));
  EXPECT_EQ(cache.size(), 2u);
  std::optional<tcp::socket> first = cache.Take();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->native_handle(), fd_b) << "the socket itself, still open, no new descriptor";
  std::optional<tcp::socket> second = cache.Take();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->native_handle(), fd_a);
  EXPECT_FALSE(cache.Take().has_value());
}

TEST(ConnectionCacheTest, ClosesWhatItCannotKeep) {
  LoopbackPairs pairs;
  std::optional<tcp::socket> peer_a;
  std::optional<tcp::socket> peer_b;
  ConnectionCache cache(1);
  cache.Give(pairs.Connect(&peer_a));
  cache.Give(pairs.Connect(&peer_b));  // over max_idle: closed
  EXPECT_EQ(cache.size(), 1u);
  char byte = 0;
  boost::system::error_code ec;
  peer_b->read_some(asio::buffer(&byte, 1), ec);
  EXPECT_EQ(ec, asio::error::eof) << "the peer of the connection not kept sees it closed";
}

TEST(ConnectionCacheTest, AConnectionTheEndpointClosedIsDroppedOnceIdleLongEnoughToBePeekedAt) {
  LoopbackPairs pairs;
  std::optional<tcp::socket> peer;
  {
    ConnectionCache peeks_at_once(64, std::chrono::milliseconds(0));
    peeks_at_once.Give(pairs.Connect(&peer));
    peer->close();  // the endpoint's idle timeout
    EXPECT_FALSE(peeks_at_once.Take().has_value());
  }
  {
    // Idle for less than the peek threshold: handed out without a system call; the relay's
    // write or read then fails before any answer and it connects anew (relay.cc).
    ConnectionCache trusts_recent(64, std::chrono::hours(1));
    trusts_recent.Give(pairs.Connect(&peer));
    peer->close();
    EXPECT_TRUE(trusts_recent.Take().has_value());
  }
  {
    ConnectionCache peeks_at_once(64, std::chrono::milliseconds(0));
    peeks_at_once.Give(pairs.Connect(&peer));  // the endpoint keeps it open
    EXPECT_TRUE(peeks_at_once.Take().has_value());
  }
}

}  // namespace
}  // namespace spillway::gateway
