#pragma once
// The relay's attempts in progress (relay.h): each one's watcher, which closes its upstream
// connection when the client leaves, its deadline passes or the drain ends it, and the
// registry that keeps every attempt's deadline on one timer.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>

#include "net/http_connection.h"

namespace spillway::gateway {

/// One attempt's watcher, shared by the attempt, its client watch and the registry, touched
/// only on the attempt's strand (but for the list links and `deadline`, which the registry's
/// lock guards): watches the client's socket and closes the upstream connection the moment the
/// client leaves, the deadline passes or the drain ends the attempt.
struct RelayWatch : std::enable_shared_from_this<RelayWatch> {
  bool stopped = false;
  bool client_gone = false;
  bool closed_for_drain = false;
  bool deadline_passed = false;
  boost::asio::ip::tcp::socket* upstream = nullptr;  // cleared when the attempt lets it go
  net::HttpConnection* client = nullptr;             // the attempt's client (valid until stopped)
  boost::asio::any_io_executor executor;
  boost::asio::cancellation_signal cancel;
  char peek_byte = 0;  // where the client watch's peek writes
  // The registry's list (under its lock).
  std::chrono::steady_clock::time_point deadline;
  RelayWatch* prev = nullptr;
  RelayWatch* next = nullptr;
  bool linked = false;

  /// Closes the upstream connection (its pending operations complete with an error).
  void CloseUpstream() {
    if (upstream != nullptr) {
      boost::system::error_code ignored;
      upstream->shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
      upstream->cancel(ignored);
    }
  }
  /// Ends the attempt for the deadline or the drain: closes the upstream and cuts a write to
  /// the client still pending (a client that stopped reading would hold the attempt for the
  /// write timeout, 30 s).
  void End() {
    CloseUpstream();
    if (client != nullptr && !stopped) {
      client->CancelPending();
    }
  }
};

/// The attempts in progress and their deadlines. Deadlines are kept as nginx keeps its timers:
/// the attempts in a list ordered by deadline (appended at the end, as every request gets the
/// same timeout) and one timer armed at the earliest, re-armed only when it fires (an attempt
/// that ends leaves the timer as it is); under load it fires about once per timeout, not
/// twice a request. An attempt whose deadline passes has its upstream connection closed on its
/// own strand and ends as kDeadline. CloseAll (a drain that ran out of time) closes them all
/// the same way; they end as kDraining (503 draining, or an SSE error event once streaming)
/// instead of a cut client connection. Thread-safe; must outlive the attempts and be destroyed
/// before the io_context runs again (its timer's handler refers to it).
class RelayRegistry {
 public:
  RelayRegistry() = default;
  RelayRegistry(const RelayRegistry&) = delete;
  RelayRegistry& operator=(const RelayRegistry&) = delete;
  ~RelayRegistry();

  void CloseAll();
  /// Registers `watch` with its deadline (RelayWatch::deadline), arming the timer on `watch`'s
  /// executor when it is not armed at or before it.
  void Add(const std::shared_ptr<RelayWatch>& watch);
  void Remove(const std::shared_ptr<RelayWatch>& watch);

 private:
  void ArmLocked(std::chrono::steady_clock::time_point at, const boost::asio::any_io_executor& ex);
  void Fired();
  void UnlinkLocked(RelayWatch* w);

  std::mutex mu_;
  RelayWatch* head_ = nullptr;  // earliest deadline first
  RelayWatch* tail_ = nullptr;
  std::optional<boost::asio::steady_timer> timer_;
  bool armed_ = false;
};

}  // namespace spillway::gateway
