#include "gateway/connection_cache.h"

#include <sys/socket.h>

#include <cerrno>

namespace spillway::gateway {
namespace {

/// Whether an idle connection is still open: nothing to read (EAGAIN) is the good case; EOF, an
/// error or unexpected bytes mean the endpoint closed it or it is out of step.
bool LooksOpen(ConnectionCache::Socket& socket) {
  char byte = 0;
  const ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

}  // namespace

std::optional<ConnectionCache::Socket> ConnectionCache::Take() {
  const std::lock_guard lock(mu_);
  const auto now = Clock::now();
  while (!idle_.empty()) {
    Idle c = std::move(idle_.back());
    idle_.pop_back();
    if (c.socket.is_open() && (now - c.since < peek_after_idle_ || LooksOpen(c.socket))) {
      return std::move(c.socket);
    }
    // Dropped: its destructor closes it.
  }
  return std::nullopt;
}

void ConnectionCache::Give(Socket connection) {
  const std::lock_guard lock(mu_);
  if (idle_.size() >= max_idle_) {
    return;  // closed as it goes out of scope
  }
  idle_.push_back({std::move(connection), Clock::now()});
}

std::size_t ConnectionCache::size() {
  const std::lock_guard lock(mu_);
  return idle_.size();
}

}  // namespace spillway::gateway
