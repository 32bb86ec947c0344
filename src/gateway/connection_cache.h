#pragma once
// Idle keep-alive connections to one upstream endpoint, shared by every session of the gateway:
// open sockets that finished a reply with keep-alive, so the next request skips the TCP
// handshake. They are kept as Asio sockets, still registered with the io_context's reactor, so
// taking one costs no epoll call (a descriptor handed over instead would be registered and
// deregistered with epoll and set non-blocking again on every request: five calls, about a
// third of what the gateway added to a request on this project's VM).
//
// A connection is peeked at, without blocking, every time it is taken: one the endpoint closed
// (its keep-alive timeout, a restart) or sent bytes on that nobody asked for is dropped, never
// handed out, so such bytes are not read as the next request's answer (a watch alone left a
// window of milliseconds, while the reactor had seen the bytes and not yet run the watch, in
// which a busy gateway handed out such a connection). One recv a request, as Go's HTTP
// transport pays one for its read loop. A connection idle for longer than `watch_after_idle` is
// also watched, as nginx watches its cached upstream connections (a one-byte peek pending,
// started by a timer that runs only while such connections wait): when the endpoint closes it
// or sends bytes, the cache closes and forgets it at once, so none stays in CLOSE-WAIT after a
// burst. Connections reused within that time are never watched (their watch would cost a recv
// more a request; an `async_wait` an `epoll_ctl`). One that the endpoint closes in the instant
// it is taken fails before any answer, and the relay decides whether to send again (relay.cc).
//
// A session on any strand may take one: the cache's lock orders the hand-over, and a socket is
// used by one session at a time. Thread-safe. Must be destroyed before the io_context its
// sockets use (the gateway's pools are); a watch or timer that completes after it is gone does
// nothing.

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
  /// Idle connections older than this are watched (the default).
  static constexpr std::chrono::milliseconds kWatchAfterIdle{1000};

  /// `max_idle`: as many as were in use at once under a burst of a thousand clients (with 64, a
  /// gateway under 1,000 connections opened 1,800 connections a second to its endpoint, whose
  /// accept queue overflowed: its connects timed out and the endpoint was ejected).
  explicit ConnectionCache(std::size_t max_idle = 1024,
                           std::chrono::milliseconds watch_after_idle = kWatchAfterIdle);
  ~ConnectionCache();
  ConnectionCache(const ConnectionCache&) = delete;
  ConnectionCache& operator=(const ConnectionCache&) = delete;

  /// The most recently returned idle connection that is still open with nothing unread (its
  /// watch stopped), or nullopt when there is none (the caller then connects).
  std::optional<Socket> Take();
  /// Keeps a connection whose last reply ended with keep-alive and left no byte unread; closes
  /// it when the cache is full.
  void Give(Socket connection);
  /// Idle connections held.
  std::size_t size();

 private:
  struct State;  // shared with the watches and the timer, which hold it weakly
  std::shared_ptr<State> state_;
};

}  // namespace spillway::gateway
