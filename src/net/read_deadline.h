#pragma once
// The deadline of a connection's request head, kept lazily as nginx keeps its timers: one
// timer per connection that is re-armed only when it fires before the current deadline (or
// when a deadline earlier than its expiry is set), instead of a timer started and cancelled
// around every read. On a busy keep-alive connection the deadline moves forward with each
// request and the timer fires about once per timeout, not once per request.
//
// When the timer finds the deadline passed while a head is being read, it cancels the socket's
// pending operations (the read completes with operation_aborted) and marks the deadline
// expired; the reader reports a timeout. All of it runs on the socket's executor (its strand,
// or the one I/O thread).

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>

namespace spillway::net {

class ReadDeadline : public std::enable_shared_from_this<ReadDeadline> {
 public:
  using Clock = std::chrono::steady_clock;

  /// `socket` must outlive the object or be detached first (Detach).
  explicit ReadDeadline(boost::asio::ip::tcp::socket& socket);

  /// The head being read must be complete by `deadline`; clears expired().
  void Set(Clock::time_point deadline);
  /// No head is being read: the timer, if armed, finds nothing to do when it fires.
  void Clear() { deadline_ = Clock::time_point::max(); }
  /// True when the timer cancelled the read because the deadline passed (until the next Set).
  bool expired() const { return expired_; }
  /// Forgets the socket and stops the timer (the connection is ending).
  void Detach();

 private:
  void Arm(Clock::time_point at);
  void Fired();

  boost::asio::ip::tcp::socket* socket_;
  boost::asio::steady_timer timer_;
  Clock::time_point deadline_ = Clock::time_point::max();
  bool armed_ = false;
  bool expired_ = false;
};

}  // namespace spillway::net
