#include "gateway/connection_cache.h"

#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace spillway::gateway {
namespace {

namespace asio = boost::asio;

/// Whether an idle connection is still open: nothing to read (EAGAIN) is the good case; EOF, an
/// error or unexpected bytes mean the endpoint closed it or it is out of step.
bool LooksOpen(ConnectionCache::Socket& socket) {
  char byte = 0;
  const ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

}  // namespace

struct ConnectionCache::State : std::enable_shared_from_this<State> {
  struct Idle {
    Socket socket;
    Clock::time_point since;
    std::uint64_t id;      // names it to its watch
    bool watched = false;  // a peek is pending on it
  };
  std::mutex mu;
  // Most recently used last, so oldest first: the watched ones are a prefix.
  std::vector<Idle> idle;
  std::uint64_t next_id = 0;
  std::size_t max_idle = 0;
  std::chrono::milliseconds watch_after_idle{};
  std::optional<asio::steady_timer> timer;
  bool armed = false;

  /// Sets the timer to start the watch of what is then idle for watch_after_idle.
  void ArmLocked(Clock::time_point at, const asio::any_io_executor& ex) {
    if (!timer.has_value()) {
      timer.emplace(ex);
    }
    armed = true;
    timer->expires_at(at);
    timer->async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
      if (ec == asio::error::operation_aborted) {
        return;  // the cache is gone
      }
      if (const std::shared_ptr<State> s = weak.lock()) {
        s->WatchTheOld();
      }
    });
  }

  /// Watches every connection idle for watch_after_idle; re-arms for the next one to be.
  void WatchTheOld() {
    const std::lock_guard lock(mu);
    armed = false;
    const auto cutoff = Clock::now() - watch_after_idle;
    for (Idle& c : idle) {
      if (c.since > cutoff) {
        ArmLocked(c.since + watch_after_idle, c.socket.get_executor());
        return;
      }
      if (!c.watched) {
        WatchLocked(c);
      }
    }
  }

  /// A one-byte peek pending on `c`: completes when the endpoint closes it or sends bytes.
  void WatchLocked(Idle& c) {
    c.watched = true;
    auto byte = std::make_unique<char>(0);  // where the peek writes: owned by its handler
    char* into = byte.get();
    c.socket.async_receive(asio::buffer(into, 1), Socket::message_peek,
                           [weak = weak_from_this(), id = c.id, byte = std::move(byte)](
                               const boost::system::error_code& ec, std::size_t) {
                             if (ec == asio::error::operation_aborted) {
                               return;  // taken, or the cache is gone
                             }
                             if (const std::shared_ptr<State> s = weak.lock()) {
                               s->Readable(id);  // EOF, an error, or bytes nobody asked for
                             }
                           });
  }

  /// The watch of connection `id` saw it readable. Drops it unless it was taken meanwhile.
  void Readable(std::uint64_t id) {
    const std::lock_guard lock(mu);
    const auto it =
        std::find_if(idle.begin(), idle.end(), [id](const Idle& c) { return c.id == id; });
    if (it != idle.end()) {
      idle.erase(it);  // its destructor closes it
    }
  }
};

ConnectionCache::ConnectionCache(std::size_t max_idle, std::chrono::milliseconds watch_after_idle)
    : state_(std::make_shared<State>()) {
  state_->max_idle = max_idle;
  state_->watch_after_idle = watch_after_idle;
}

ConnectionCache::~ConnectionCache() = default;

std::optional<ConnectionCache::Socket> ConnectionCache::Take() {
  State& s = *state_;
  const std::lock_guard lock(s.mu);
  while (!s.idle.empty()) {
    State::Idle c = std::move(s.idle.back());
    s.idle.pop_back();
    if (c.watched) {
      boost::system::error_code ignored;
      c.socket.cancel(ignored);  // no system call: the reactor's queue
    }
    if (c.socket.is_open() && LooksOpen(c.socket)) {
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
  const auto now = Clock::now();
  s.idle.push_back({std::move(connection), now, ++s.next_id});
  if (!s.armed) {
    s.ArmLocked(now + s.watch_after_idle, s.idle.back().socket.get_executor());
  }
}

std::size_t ConnectionCache::size() {
  const std::lock_guard lock(state_->mu);
  return state_->idle.size();
}

}  // namespace spillway::gateway
