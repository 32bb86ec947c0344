#include "net/redis_client.h"

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <boost/asio/async_result.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>
#include <chrono>
#include <csignal>
#include <functional>

namespace spillway::net {
namespace {

namespace asio = boost::asio;

RedisReply CopyReply(const redisReply& r) {
  RedisReply out;
  switch (r.type) {
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = r.integer;
      break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      out.type = r.type == REDIS_REPLY_STRING   ? RedisReply::Type::kString
                 : r.type == REDIS_REPLY_STATUS ? RedisReply::Type::kStatus
                                                : RedisReply::Type::kError;
      out.str.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      for (std::size_t i = 0; i < r.elements; ++i) {
        out.elements.push_back(CopyReply(*r.element[i]));
      }
      break;
    default:
      break;
  }
  return out;
}

/// Completes a command's awaiting coroutine: posts its resumption to its own executor, never
/// inline on the client's strand.
using Handler = std::function<void(std::optional<RedisReply>)>;

/// One command waiting for its reply or its budget, whichever comes first.
struct Op {
  Handler handler;  ///< empty: sent without waiting
  std::optional<asio::steady_timer> budget;
  bool done = false;
};

}  // namespace

std::optional<RedisAddress> ParseRedisUrl(std::string_view url, std::string* error) {
  RedisAddress a;
  if (url.starts_with("unix://")) {
    a.unix_path = std::string(url.substr(7));
    if (a.unix_path.empty() || a.unix_path.front() != '/') {
      *error = "a unix URL needs an absolute path: unix:///path/to/redis.sock";
      return std::nullopt;
    }
    return a;
  }
  if (!url.starts_with("redis://")) {
    *error = "must be redis://IP[:PORT] or unix:///PATH";
    return std::nullopt;
  }
  std::string_view rest = url.substr(8);
  if (rest.find('@') != std::string_view::npos) {
    *error = "a user or password (AUTH) is not supported yet: a Redis without one";
    return std::nullopt;
  }
  if (!rest.empty() && rest.back() == '/') {
    rest.remove_suffix(1);
  }
  if (rest.find('/') != std::string_view::npos) {
    *error = "a database number is not supported: the quotas use database 0";
    return std::nullopt;
  }
  const std::size_t colon = rest.rfind(':');
  std::string_view host = rest;
  if (colon != std::string_view::npos && rest.find(']') == std::string_view::npos) {
    host = rest.substr(0, colon);
    const std::string_view port = rest.substr(colon + 1);
    const auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), a.port);
    if (ec != std::errc() || p != port.data() + port.size() || a.port < 1 || a.port > 65535) {
      *error = "the port must be in [1, 65535]";
      return std::nullopt;
    }
  }
  if (host.empty() || host.find_first_not_of("0123456789.") != std::string_view::npos) {
    *error = "the host must be an IPv4 address such as 127.0.0.1 (names are not resolved)";
    return std::nullopt;
  }
  a.host = std::string(host);
  return a;
}

/// What the strand's handlers share. Every member but `up` and `connects` is the strand's.
struct RedisClient::Core : std::enable_shared_from_this<RedisClient::Core> {
  /// hiredis's event hooks for one connection (ev.data), over the connection's descriptor.
  struct Events : std::enable_shared_from_this<Events> {
    Events(Core* c, redisAsyncContext* a, const asio::strand<asio::any_io_executor>& s)
        : core(c), ac(a), sd(s, a->c.fd) {}
    Core* core;
    redisAsyncContext* ac;  ///< null once hiredis freed it
    asio::posix::stream_descriptor sd;
    bool reading = false;
    bool writing = false;
    bool read_armed = false;
    bool write_armed = false;
  };

  Core(const asio::any_io_executor& ex, RedisAddress a, Seconds reconnect_s)
      : strand(asio::make_strand(ex)),
        address(std::move(a)),
        reconnect_interval_s(reconnect_s),
        reconnect(strand) {}

  ~Core() {
    // Only when the event loop is gone with the client's last handlers: nothing runs anymore.
    freeing = true;
    if (ac != nullptr) {
      redisAsyncFree(ac);
    }
  }

  asio::strand<asio::any_io_executor> strand;
  RedisAddress address;
  Seconds reconnect_interval_s;
  asio::steady_timer reconnect;
  redisAsyncContext* ac = nullptr;
  std::shared_ptr<Events> events;
  bool stopped = false;
  bool freeing = false;
  std::atomic<bool> up{false};
  std::atomic<std::int64_t> connects{0};
  mutable std::mutex error_mu;
  std::string error;  ///< under error_mu

  void SetError(const char* text) {
    const std::lock_guard lock(error_mu);
    error = text != nullptr ? text : "";
  }

  /// Waits for the descriptor to be readable (or writable) and lets hiredis read (write) then,
  /// for as long as hiredis wants to.
  static void Arm(const std::shared_ptr<Events>& e, bool write) {
    bool& armed = write ? e->write_armed : e->read_armed;
    if (armed || e->ac == nullptr) {
      return;
    }
    armed = true;
    e->sd.async_wait(
        write ? asio::posix::descriptor_base::wait_write : asio::posix::descriptor_base::wait_read,
        [e, write](const boost::system::error_code& ec) {
          (write ? e->write_armed : e->read_armed) = false;
          const auto wanted = [&] { return write ? e->writing : e->reading; };
          if (ec || e->ac == nullptr || !wanted()) {
            return;
          }
          if (write) {
            redisAsyncHandleWrite(e->ac);
          } else {
            redisAsyncHandleRead(e->ac);  // may free the context (Cleanup)
          }
          if (e->ac != nullptr && wanted()) {
            Arm(e, write);
          }
        });
  }
  static Events& Of(void* p) { return *static_cast<Events*>(p); }
  static void AddRead(void* p) {
    Of(p).reading = true;
    Arm(Of(p).shared_from_this(), false);
  }
  static void DelRead(void* p) { Of(p).reading = false; }
  static void AddWrite(void* p) {
    Of(p).writing = true;
    Arm(Of(p).shared_from_this(), true);
  }
  static void DelWrite(void* p) { Of(p).writing = false; }
  /// hiredis frees the context: the descriptor is its to close.
  static void Cleanup(void* p) {
    Events& e = Of(p);
    e.ac = nullptr;
    e.reading = e.writing = false;
    e.sd.release();
    e.core->Gone();
  }
  static void OnConnect(const redisAsyncContext* c, int status) {
    auto* core = static_cast<Core*>(c->data);
    if (core == nullptr) {
      return;
    }
    if (status == REDIS_OK) {
      core->up = true;
      core->connects.fetch_add(1);
    } else {
      core->SetError(c->errstr);
    }
  }
  static void OnDisconnect(const redisAsyncContext* c, int /*status*/) {
    if (auto* core = static_cast<Core*>(c->data)) {
      core->up = false;
      if (c->err != 0) {
        core->SetError(c->errstr);
      }
    }
  }
  static void OnReply(redisAsyncContext* c, void* reply, void* privdata) {
    const std::unique_ptr<std::shared_ptr<Op>> op(static_cast<std::shared_ptr<Op>*>(privdata));
    auto* core = static_cast<Core*>(c->data);
    if (core == nullptr || op == nullptr) {
      return;
    }
    core->Complete(*op, reply != nullptr
                            ? std::optional(CopyReply(*static_cast<redisReply*>(reply)))
                            : std::nullopt);
  }

  void Gone() {
    ac = nullptr;
    events.reset();
    up = false;
    if (!stopped && !freeing) {
      ScheduleConnect();
    }
  }

  void ScheduleConnect() {
    reconnect.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(reconnect_interval_s)));
    reconnect.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec && !self->stopped && self->ac == nullptr) {
        self->Connect();
      }
    });
  }

  void Connect() {
    redisAsyncContext* c = address.unix_path.empty()
                               ? redisAsyncConnect(address.host.c_str(), address.port)
                               : redisAsyncConnectUnix(address.unix_path.c_str());
    if (c == nullptr || c->err != 0) {
      SetError(c != nullptr ? c->errstr : "out of memory");
      if (c != nullptr) {
        redisAsyncFree(c);
      }
      ScheduleConnect();
      return;
    }
    c->data = this;
    events = std::make_shared<Events>(this, c, strand);
    c->ev.data = events.get();
    c->ev.addRead = &AddRead;
    c->ev.delRead = &DelRead;
    c->ev.addWrite = &AddWrite;
    c->ev.delWrite = &DelWrite;
    c->ev.cleanup = &Cleanup;
    ac = c;
    redisAsyncSetDisconnectCallback(c, &OnDisconnect);
    redisAsyncSetConnectCallback(c, &OnConnect);  // (last: it waits for the first write event)
  }

  void Stop() {
    stopped = true;
    reconnect.cancel();
    if (ac != nullptr) {
      redisAsyncFree(ac);  // pending commands complete with nullopt
    }
  }

  void Complete(const std::shared_ptr<Op>& op, std::optional<RedisReply> reply) {
    if (op->done) {
      return;
    }
    op->done = true;
    if (op->budget.has_value()) {
      op->budget->cancel();
    }
    if (!op->handler || freeing) {
      return;
    }
    std::move(op->handler)(std::move(reply));
    op->handler = nullptr;
  }

  /// Starts a command for an awaiting coroutine (async_initiate's initiation).
  struct CommandInit {
    std::shared_ptr<Core> core;
    Seconds budget_s;
    template <class H>
    void operator()(H handler, std::vector<std::string> argv) const {
      auto op = std::make_shared<Op>();
      auto h = std::make_shared<H>(std::move(handler));
      op->handler = [h](std::optional<RedisReply> reply) {
        const auto ex = asio::get_associated_executor(*h);
        asio::post(ex, [h, r = std::move(reply)]() mutable { std::move (*h)(std::move(r)); });
      };
      asio::post(core->strand,
                 [c = core, op, a = std::move(argv), b = budget_s] { c->Start(op, a, b); });
    }
  };

  void Start(const std::shared_ptr<Op>& op, const std::vector<std::string>& args,
             Seconds budget_s) {
    if (ac == nullptr || !up) {
      Complete(op, std::nullopt);
      return;
    }
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* priv = op->handler ? new std::shared_ptr<Op>(op) : nullptr;
    if (redisAsyncCommandArgv(ac, op->handler ? &OnReply : nullptr, priv,
                              static_cast<int>(argv.size()), argv.data(),
                              lens.data()) != REDIS_OK) {
      delete priv;
      Complete(op, std::nullopt);
      return;
    }
    if (!op->handler) {
      return;
    }
    op->budget.emplace(strand);
    op->budget->expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(budget_s)));
    op->budget->async_wait([self = shared_from_this(), op](const boost::system::error_code& ec) {
      if (!ec) {
        self->Complete(op, std::nullopt);
      }
    });
  }
};

RedisClient::RedisClient(const asio::any_io_executor& executor, RedisAddress address,
                         Seconds reconnect_interval_s)
    : core_(std::make_shared<Core>(executor, std::move(address), reconnect_interval_s)) {
  // hiredis writes with write(2), not send(MSG_NOSIGNAL) as Asio does: a write to a Redis that
  // died would raise SIGPIPE and end the process. Ignored process-wide, as Redis and nginx do.
  std::signal(SIGPIPE, SIG_IGN);
  asio::post(core_->strand, [core = core_] { core->Connect(); });
}

RedisClient::~RedisClient() {
  asio::post(core_->strand, [core = core_] { core->Stop(); });
}

void RedisClient::Reset() {
  asio::post(core_->strand, [core = core_] {
    if (core->ac != nullptr && !core->stopped) {
      core->SetError("no answer: connection dropped");
      redisAsyncFree(core->ac);  // Cleanup -> Gone: a new connection after reconnect_interval_s
    }
  });
}

bool RedisClient::connected() const { return core_->up.load(); }

std::string RedisClient::last_error() const {
  const std::lock_guard lock(core_->error_mu);
  return core_->error;
}
std::int64_t RedisClient::connects() const { return core_->connects.load(); }

asio::awaitable<std::optional<RedisReply>> RedisClient::Command(std::vector<std::string> args,
                                                                Seconds budget_s) {
  // (A named initiation, and no `co_return co_await`: GCC 12 destroys a temporary of a
  // co_await expression twice.)
  Core::CommandInit init{core_, budget_s};
  std::optional<RedisReply> reply = co_await asio::async_initiate<const asio::use_awaitable_t<>&,
                                                                  void(std::optional<RedisReply>)>(
      init, asio::use_awaitable, std::move(args));
  co_return reply;
}

void RedisClient::Send(std::vector<std::string> args) {
  asio::post(core_->strand, [core = core_, args = std::move(args)] {
    core->Start(std::make_shared<Op>(), args, 0);
  });
}

}  // namespace spillway::net
