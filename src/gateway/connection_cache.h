#pragma once
// Idle keep-alive connections to one upstream endpoint, shared by every session of the gateway:
// open sockets that finished a reply with keep-alive, so the next request skips the TCP
// handshake. They are kept as Asio sockets, still registered with the io_context's reactor, so
// taking one costs no system call (a descriptor handed over instead would be registered and
// deregistered with epoll and set non-blocking again on every request: five calls, about a
// third of what the gateway added to a request on this project's VM). A session on any strand
// may take one: the cache's lock orders the hand-over, and a socket is used by one session at
// a time. A connection idle for longer than kPeekAfterIdle is first peeked at without
// blocking, and dropped when the endpoint has closed it meanwhile (its idle timeout); one that
// the endpoint closed sooner fails before any answer, and the relay then connects anew.
// Thread-safe. Must be destroyed before the io_context its sockets use (the gateway's pools
// are).

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

namespace spillway::gateway {

class ConnectionCache {
 public:
  using Socket = boost::asio::ip::tcp::socket;
  using Clock = std::chrono::steady_clock;
  /// Idle connections older than this are peeked at before they are reused (the default).
  static constexpr std::chrono::milliseconds kPeekAfterIdle{1000};

  /// `max_idle`: as many as were in use at once under a burst of a thousand clients (with 64, a
  /// gateway under 1,000 connections opened 1,800 connections a second to its endpoint, whose
  /// accept queue overflowed: its connects timed out and the endpoint was ejected).
  explicit ConnectionCache(std::size_t max_idle = 1024,
                           std::chrono::milliseconds peek_after_idle = kPeekAfterIdle)
      : max_idle_(max_idle), peek_after_idle_(peek_after_idle) {}
  ConnectionCache(const ConnectionCache&) = delete;
  ConnectionCache& operator=(const ConnectionCache&) = delete;

  /// The most recently returned idle connection that still looks open, or nullopt when there is
  /// none (the caller then connects).
  std::optional<Socket> Take();
  /// Returns a connection whose last reply ended with keep-alive (closes it when full).
  void Give(Socket connection);
  /// Idle connections held.
  std::size_t size();

 private:
  struct Idle {
    Socket socket;
    Clock::time_point since;
  };
  std::mutex mu_;
  std::vector<Idle> idle_;  // most recently used last
  std::size_t max_idle_;
  std::chrono::milliseconds peek_after_idle_;
};

}  // namespace spillway::gateway
