#pragma once
// Idle keep-alive connections to one upstream endpoint, shared by every session of the gateway:
// open sockets (file descriptors) that finished a reply with keep-alive, so the next request
// skips the TCP handshake. A descriptor carries no executor, so a session on any strand adopts
// it (asio's assign). Before handing one out, a non-blocking peek drops those the endpoint has
// closed meanwhile (its idle timeout). Thread-safe.

#include <cstddef>
#include <mutex>
#include <vector>

namespace spillway::gateway {

class ConnectionCache {
 public:
  explicit ConnectionCache(std::size_t max_idle = 64) : max_idle_(max_idle) {}
  ~ConnectionCache();
  ConnectionCache(const ConnectionCache&) = delete;
  ConnectionCache& operator=(const ConnectionCache&) = delete;

  /// An idle connection: its descriptor and address family (AF_INET or AF_INET6).
  struct Idle {
    int fd = -1;
    int family = 0;
  };
  /// An idle connection that still looks open, or fd -1 when there is none (the caller then
  /// connects).
  Idle Take();
  /// Returns a connection whose last reply ended with keep-alive (closes it when full).
  void Give(Idle connection);

 private:
  std::mutex mu_;
  std::vector<Idle> idle_;  // most recently used last
  std::size_t max_idle_;
};

}  // namespace spillway::gateway
