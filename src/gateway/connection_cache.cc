#include "gateway/connection_cache.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace spillway::gateway {
namespace {

/// Whether an idle connection is still open: nothing to read (EAGAIN) is the good case; EOF, an
/// error or unexpected bytes mean the endpoint closed it or it is out of step.
bool LooksOpen(int fd) {
  char byte = 0;
  const ssize_t n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

}  // namespace

ConnectionCache::~ConnectionCache() {
  for (const Idle& c : idle_) {
    ::close(c.fd);
  }
}

ConnectionCache::Idle ConnectionCache::Take() {
  const std::lock_guard lock(mu_);
  while (!idle_.empty()) {
    const Idle c = idle_.back();
    idle_.pop_back();
    if (LooksOpen(c.fd)) {
      return c;
    }
    ::close(c.fd);
  }
  return {};
}

void ConnectionCache::Give(Idle connection) {
  const std::lock_guard lock(mu_);
  if (idle_.size() >= max_idle_) {
    ::close(connection.fd);
    return;
  }
  idle_.push_back(connection);
}

}  // namespace spillway::gateway
