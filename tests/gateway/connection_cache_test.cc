// The gateway's idle upstream connections (gateway/connection_cache.h): kept as registered Asio
// sockets, handed out most recent first, bounded; one the endpoint closed or sent unasked bytes
// on is never handed out (the peek at every take), and one idle for a while is dropped as it
// happens (its watch).

#include "gateway/connection_cache.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <optional>
#include <string_view>
#include <thread>
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
  /// Runs the sockets' handlers until `done()` or `limit` has passed.
  template <typename Done>
  void RunUntil(Done done, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (!done() && std::chrono::steady_clock::now() < give_up) {
      ioc_.restart();
      ioc_.run_for(std::chrono::milliseconds(10));
    }
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

TEST(ConnectionCacheTest, AConnectionTheEndpointClosedIsNeverHandedOut) {
  LoopbackPairs pairs;
  std::optional<tcp::socket> closed_by_endpoint;
  std::optional<tcp::socket> kept_open;
  ConnectionCache cache(64, std::chrono::hours(1));  // no watch: the peek at the take sees it
  cache.Give(pairs.Connect(&kept_open));
  cache.Give(pairs.Connect(&closed_by_endpoint));
  closed_by_endpoint->close();  // the endpoint's idle timeout
  std::optional<tcp::socket> taken = cache.Take();
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->remote_endpoint().port(), kept_open->local_endpoint().port());
  EXPECT_FALSE(cache.Take().has_value());
}

TEST(ConnectionCacheTest, BytesThatCameJustBeforeTheTakeAreSeenWithoutTheWatch) {
  LoopbackPairs pairs;
  std::optional<tcp::socket> peer;
  ConnectionCache cache(64, std::chrono::milliseconds(0));  // watched as soon as the loop runs
  cache.Give(pairs.Connect(&peer));
  asio::write(*peer, asio::buffer(std::string_view("HTTP/1.1 200 OK\r\n\r\n")));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // delivered; the loop never ran
  EXPECT_FALSE(cache.Take().has_value()) << "never read as the next request's answer";
}

TEST(ConnectionCacheTest, AnIdleConnectionTheEndpointClosesIsClosedAtOnceNotLeftInCloseWait) {
  LoopbackPairs pairs;
  std::optional<tcp::socket> closed_by_endpoint;
  std::optional<tcp::socket> kept_open;
  ConnectionCache cache(64, std::chrono::milliseconds(10));
  cache.Give(pairs.Connect(&kept_open));
  cache.Give(pairs.Connect(&closed_by_endpoint));
  pairs.RunUntil([] { return false; }, std::chrono::milliseconds(50));  // both watched now
  closed_by_endpoint->close();  // the endpoint's keep-alive timeout
  pairs.RunUntil([&] { return cache.size() == 1; });
  EXPECT_EQ(cache.size(), 1u) << "the closed one dropped without a Take";
  std::optional<tcp::socket> left = cache.Take();
  ASSERT_TRUE(left.has_value());
  char byte = 0;
  boost::system::error_code ec;
  left->non_blocking(true);
  left->read_some(asio::buffer(&byte, 1), ec);
  EXPECT_EQ(ec, asio::error::would_block) << "the one handed out is the open one";
}

TEST(ConnectionCacheTest, BytesNobodyAskedForDropTheConnectionInsteadOfAnsweringTheNextRequest) {
  LoopbackPairs pairs;
  std::optional<tcp::socket> peer;
  ConnectionCache cache(64, std::chrono::milliseconds(10));
  cache.Give(pairs.Connect(&peer));
  pairs.RunUntil([] { return false; }, std::chrono::milliseconds(50));
  asio::write(*peer, asio::buffer(std::string_view("HTTP/1.1 200 OK\r\n\r\n")));
  pairs.RunUntil([&] { return cache.size() == 0; });
  EXPECT_EQ(cache.size(), 0u);
  char byte = 0;
  boost::system::error_code ec;
  peer->read_some(asio::buffer(&byte, 1), ec);
  // A reset: the bytes were never read, and a close with unread data resets (RFC 1122 4.2.2.13).
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset)
      << "the endpoint sees the connection closed: " << ec.message();
}

TEST(ConnectionCacheTest, ATakenConnectionIsNoLongerWatchedAndAWatchOutlivingTheCacheDoesNothing) {
  LoopbackPairs pairs;
  std::optional<tcp::socket> peer_taken;
  std::optional<tcp::socket> peer_left;
  std::optional<tcp::socket> taken;
  {
    ConnectionCache cache(64, std::chrono::milliseconds(0));
    cache.Give(pairs.Connect(&peer_taken));
    pairs.RunUntil([] { return false; }, std::chrono::milliseconds(30));  // watched
    taken = cache.Take();
    cache.Give(pairs.Connect(&peer_left));
    pairs.RunUntil([] { return false; }, std::chrono::milliseconds(30));
  }  // destroyed with a watch pending
  ASSERT_TRUE(taken.has_value());
  asio::write(*peer_taken, asio::buffer(std::string_view("x")));
  peer_left->close();
  pairs.RunUntil([] { return false; }, std::chrono::milliseconds(100));  // the watches end
  char byte = 0;
  boost::system::error_code ec;
  taken->read_some(asio::buffer(&byte, 1), ec);
  EXPECT_FALSE(ec) << "the taken connection is the caller's to read";
  EXPECT_EQ(byte, 'x');
}

}  // namespace
}  // namespace spillway::gateway
