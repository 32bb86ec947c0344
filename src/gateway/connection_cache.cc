#include "gateway/connection_cache.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

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

struct ConnectionCache::State {
  struct Idle {
    Socket socket;
    Clock::time_point since;
    std::uint64_t id;  // names it to its watch
  };
  std::mutex mu;
  std::vector<Idle> idle;  // most recently used last
  std::uint64_t next_id = 0;
  std::size_t max_idle;
  std::chrono::milliseconds peek_after_idle;

  /// The watch of connection `id` saw it readable: closed by the endpoint, or bytes nobody
  /// asked for. Drops it unless it was taken meanwhile.
  void Readable(std::uint64_t id) {
    const std::lock_guard lock(mu);
    const auto it =
        std::find_if(idle.begin(), idle.end(), [id](const Idle& c) { return c.id == id; });
    if (it != idle.end()) {
      idle.erase(it);  // its destructor closes it
    }
  }
};

ConnectionCache::ConnectionCache(std::size_t max_idle, std::chrono::milliseconds peek_after_idle)
    : state_(std::make_shared<State>()) {
  state_->max_idle = max_idle;
  state_->peek_after_idle = peek_after_idle;
}

ConnectionCache::~ConnectionCache() = default;

std::optional<ConnectionCache::Socket> ConnectionCache::Take() {
  State& s = *state_;
  const std::lock_guard lock(s.mu);
  const auto now = Clock::now();
  while (!s.idle.empty()) {
    State::Idle c = std::move(s.idle.back());
    s.idle.pop_back();
    boost::system::error_code ignored;
    c.socket.cancel(ignored);  // stops the watch (no system call: the reactor's queue)
    if (c.socket.is_open() && (now - c.since < s.peek_after_idle || LooksOpen(c.socket))) {
      return std::move(c.socket);
    }
    // Dropped: its destructor closes it.
  }
  return std::nullopt;
}

void ConnectionCache::Give(Socket connection) {
  State& s = *state_;
  const std::lock_guard lock(s.mu);
  if (s.idle.size() >= s.max_idle || !connection.is_open()) {
    return;  // closed as it goes out of scope
  }
  const std::uint64_t id = ++s.next_id;
  s.idle.push_back({std::move(connection), Clock::now(), id});
  // The watch is a one-byte peek, not async_wait: Asio starts a wait with an epoll_ctl every
  // time, a read with at most one recv.
  auto byte = std::make_unique<char>(0);  // where the peek writes: owned by its handler
  char* into = byte.get();
  s.idle.back().socket.async_receive(
      boost::asio::buffer(into, 1), Socket::message_peek,
      [weak = std::weak_ptr<State>(state_), id, byte = std::move(byte)](
          const boost::system::error_code& ec, std::size_t) {
        if (ec == boost::asio::error::operation_aborted) {
          return;  // taken, or the cache is gone
        }
        if (const std::shared_ptr<State> state = weak.lock()) {
          state->Readable(id);  // EOF, an error, or bytes nobody asked for
        }
      });
}

std::size_t ConnectionCache::size() {
  const std::lock_guard lock(state_->mu);
  return state_->idle.size();
}

}  // namespace spillway::gateway
