#pragma once
// A Redis connection on the gateway's event loop: hiredis's asynchronous context (Debian's
// libhiredis-dev, which parses the protocol) driven by Asio instead of one of hiredis's own
// event-library adapters, so a command never blocks an I/O thread.
//
// Thread-safety: every member function may be called from any thread; hiredis is touched only
// on the client's strand. A command waits at most its budget: a reply that comes later is
// dropped. A lost connection is made again every reconnect_interval_s, for as long as the
// client lives.

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/strand.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.h"

namespace spillway::net {

/// A Redis reply, copied out of hiredis's.
struct RedisReply {
  enum class Type : std::uint8_t { kNil, kInteger, kString, kStatus, kError, kArray };
  Type type = Type::kNil;
  long long integer = 0;
  std::string str;  ///< kString, kStatus and kError
  std::vector<RedisReply> elements;
};

/// Where Redis listens.
struct RedisAddress {
  std::string host;  ///< an IP address (hiredis resolves names by blocking)
  int port = 6379;
  std::string unix_path;  ///< non-empty: a unix socket instead
  bool operator==(const RedisAddress&) const = default;
};

/// Parses redis://IP[:PORT] (6379 by default) or unix:///PATH; nullopt, with `error` saying
/// why, for anything else.
std::optional<RedisAddress> ParseRedisUrl(std::string_view url, std::string* error);

class RedisClient {
 public:
  /// Connects at once (and again whenever the connection is lost) on a strand of `executor`.
  /// Ignores SIGPIPE process-wide (hiredis writes with write(2)).
  RedisClient(const boost::asio::any_io_executor& executor, RedisAddress address,
              Seconds reconnect_interval_s = 0.1);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  /// Sends the command `args` (its name, then its arguments) and waits at most `budget_s` for
  /// its reply: nullopt when not connected, when the budget runs out, or when the connection is
  /// lost first. A Redis error is a reply of type kError.
  boost::asio::awaitable<std::optional<RedisReply>> Command(std::vector<std::string> args,
                                                            Seconds budget_s);
  /// Sends the command `args` without waiting for its reply (dropped when not connected).
  void Send(std::vector<std::string> args);

  /// Drops the connection (its pending commands complete with nullopt) and makes a new one:
  /// for a Redis that accepted the connection but stopped answering.
  void Reset();

  /// Whether the connection is up now.
  bool connected() const;
  /// Why the last connection attempt failed or the last connection was lost (hiredis's text);
  /// empty when none did.
  std::string last_error() const;
  /// Connections made so far (the first included).
  std::int64_t connects() const;

 private:
  struct Core;  // the state the strand's handlers share
  std::shared_ptr<Core> core_;
};

}  // namespace spillway::net
