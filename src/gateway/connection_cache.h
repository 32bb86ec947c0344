#pragma once
// Idle keep-alive connections to one upstream endpoint, shared by every session of the gateway:
// open sockets that finished a reply with keep-alive, so the next request skips the TCP
// handshake. They are kept as Asio sockets, still registered with the io_context's reactor, so
// taking one costs no system call (a descriptor handed over instead would be registered and
// deregistered with epoll and set non-blocking again on every request: five calls, about a
// third of what the gateway added to a request on this project's VM).
//
// An idle connection is watched, as nginx's upstream keepalive watches its cached connections:
// a one-byte peek is pending on it (already in epoll, the socket needs no epoll_ctl for it, as
// an async_wait would; Asio first tries the peek once, a recv that finds nothing: one cheap
// system call a request, as Go's HTTP transport pays for its read loop), and
// when the endpoint closes it (its idle timeout, a restart) or sends bytes nobody asked for,
// the cache closes and forgets it at once. Without the watch such connections stayed in
// CLOSE-WAIT until reused (hundreds after a burst), and an unsolicited answer would have been
// read as the next request's. A connection idle for longer than kPeekAfterIdle is also peeked at
// without blocking before it is handed out (a close that raced the watch); one that the
// endpoint closes in the instant it is taken fails before any answer, and the relay decides
// whether to send again (relay.cc).
//
// A session on any strand may take one: the cache's lock orders the hand-over, and a socket is
// used by one session at a time. Thread-safe. Must be destroyed before the io_context its
// sockets use (the gateway's pools are); a watch that completes after it is gone does nothing.

#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>

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
                           std::chrono::milliseconds peek_after_idle = kPeekAfterIdle);
  ~ConnectionCache();
  ConnectionCache(const ConnectionCache&) = delete;
  ConnectionCache& operator=(const ConnectionCache&) = delete;

  /// The most recently returned idle connection that still looks open, its watch stopped, or
  /// nullopt when there is none (the caller then connects).
  std::optional<Socket> Take();
  /// Keeps a connection whose last reply ended with keep-alive and left no byte unread, and
  /// starts its watch; closes it when the cache is full.
  void Give(Socket connection);
  /// Idle connections held.
  std::size_t size();

 private:
  struct State;  // shared with the watches, which hold it weakly
  std::shared_ptr<State> state_;
};

}  // namespace spillway::gateway
