#include "gateway/shared_quota.h"

#include <fmt/format.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cmath>
#include <iostream>
#include <random>

#include "gateway/quota_script.h"

namespace spillway::gateway {

std::map<std::string, TenantQuotaLimits, std::less<>> QuotaLimitsOf(
    const std::map<std::string, server::ApiKey>& keys, bool with_requests) {
  std::map<std::string, TenantQuotaLimits, std::less<>> out;
  for (const auto& [key, k] : keys) {
    TenantQuotaLimits& l = out[k.tenant];
    if (with_requests && k.rate_rps > 0 && !l.requests.has_value()) {
      l.requests = GcraLimit{k.rate_rps, k.burst};
    }
    if (k.tokens_per_s > 0 && !l.tokens.has_value()) {
      l.tokens = GcraLimit{k.tokens_per_s,
                           k.token_burst > 0 ? k.token_burst : std::max(1.0, k.tokens_per_s)};
    }
    if (k.retry_rps > 0 && !l.retries.has_value()) {
      l.retries = GcraLimit{k.retry_rps, k.retry_burst};
    }
  }
  return out;
}

std::string RequestIdentity(std::string_view idempotency_key, std::string_view body) {
  const std::string_view bytes = idempotency_key.empty() ? body : idempotency_key;
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a, 64 bits
  for (const char c : bytes) {
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  return fmt::format("{}{:016x}", idempotency_key.empty() ? "b" : "k", h);
}

namespace {

namespace asio = boost::asio;

/// A limit as the script's three arguments (rate, burst, cost): rate 0 when unset.
void PushLimit(const std::optional<GcraLimit>& l, double cost, std::vector<std::string>* argv) {
  argv->push_back(l.has_value() ? fmt::format("{}", l->rate_per_s) : "0");
  argv->push_back(l.has_value() ? fmt::format("{}", l->burst) : "1");
  argv->push_back(fmt::format("{}", cost));
}

/// The script's answer {allowed, refused by, retry after us, retry} as a decision; nullopt for
/// any other reply.
std::optional<QuotaDecision> ParseVerdict(const net::RedisReply& r) {
  if (r.type != net::RedisReply::Type::kArray || r.elements.size() != 4) {
    return std::nullopt;
  }
  for (const net::RedisReply& e : r.elements) {
    if (e.type != net::RedisReply::Type::kInteger) {
      return std::nullopt;
    }
  }
  QuotaDecision d;
  const long long by = r.elements[1].integer;
  if (r.elements[0].integer == 0) {
    d.refused_by = by == 2   ? QuotaLimit::kTokens
                   : by == 3 ? QuotaLimit::kRetries
                             : QuotaLimit::kRequests;
  }
  d.retry_after_s = static_cast<double>(r.elements[2].integer) / 1e6;
  d.retry = r.elements[3].integer != 0;
  return d;
}

std::chrono::steady_clock::duration Duration(Seconds s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(s));
}

}  // namespace

struct SharedQuota::Shared {
  std::atomic<bool> stop{false};
  /// Redis answered the last heartbeat and the scripts are loaded on this connection.
  std::atomic<bool> ready{false};
  std::mutex mu;
  std::string quota_sha;  ///< under mu (kQuotaScript, or kFixedWindowScript)
  std::string adjust_sha;
  std::int64_t loaded_for = -1;  ///< the connection (RedisClient::connects) they were loaded on
};

std::string_view SharedQuota::ToString(Mode mode) {
  switch (mode) {
    case Mode::kLocal:
      return "local";
    case Mode::kShared:
      return "shared";
    case Mode::kFailOpen:
      return "fail_open";
    case Mode::kFailClose:
      return "fail_close";
  }
  return "local";
}

SharedQuota::SharedQuota(const asio::any_io_executor& executor, const RateLimitConfig& config,
                         GatewayMetrics& metrics, const net::SteadyClock& clock)
    : config_(config),
      metrics_(metrics),
      clock_(clock),
      shared_(std::make_shared<Shared>()),
      mode_(Mode::kLocal),
      gateways_(config.gateways),
      local_(config.retry_window_s) {
  metrics_.rate_limit_gateways->Set(gateways_.load());
  if (config_.shared()) {
    // Unavailable until the first heartbeat, which says so (and why) on stderr.
    mode_ = config_.fail_open ? Mode::kFailOpen : Mode::kFailClose;
  }
  for (const Mode m : {Mode::kLocal, Mode::kShared, Mode::kFailOpen, Mode::kFailClose}) {
    metrics_.rate_limiter_mode->With({std::string(ToString(m))}).Set(m == mode_.load() ? 1 : 0);
  }
  if (!config_.shared()) {
    return;
  }
  std::string error;
  redis_ = std::make_unique<net::RedisClient>(executor, *net::ParseRedisUrl(config_.redis, &error));
  asio::co_spawn(executor, Heartbeat(shared_), asio::detached);
}

SharedQuota::~SharedQuota() { shared_->stop = true; }

std::string SharedQuota::Key(std::string_view tenant, std::string_view what) const {
  return QuotaKey(config_.key_prefix, tenant, what);
}

std::string QuotaKey(std::string_view prefix, std::string_view tenant, std::string_view what) {
  // The tenant in braces: a Redis Cluster hash tag, so one script's keys share a slot; its own
  // braces (and %) escaped, so that the tag is the whole tenant.
  std::string escaped;
  for (const char c : tenant) {
    if (c == '{' || c == '}' || c == '%') {
      escaped += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      escaped += c;
    }
  }
  return fmt::format("{}:{{{}}}:{}", prefix, escaped, what);
}

void SharedQuota::SetMode(Mode mode, std::string_view why) {
  const Mode before = mode_.exchange(mode);
  if (before != mode) {
    metrics_.rate_limiter_mode->With({std::string(ToString(before))}).Set(0);
    metrics_.rate_limiter_mode->With({std::string(ToString(mode))}).Set(1);
  }
  // Said on stderr: every change of mode, the first state, and a new reason for the same
  // mode at most every 5 s.
  const Seconds now = clock_.Now();
  {
    const std::lock_guard lock(log_mu_);
    if (before == mode && logged_ && (why == last_why_ || now - last_log_s_ < 5)) {
      return;
    }
    logged_ = true;
    last_why_ = std::string(why);
    last_log_s_ = now;
  }
  const std::int32_t n = gateways_.load();
  std::cerr << fmt::format(
      "spillway gateway: tenant quotas: {} ({}){}\n", ToString(mode), why,
      mode == Mode::kFailOpen
          ? fmt::format("; each rate divided by {} gateway{}", n, n == 1 ? "" : "s")
          : "");
}

void SharedQuota::Unavailable(std::string_view why) {
  shared_->ready = false;
  SetMode(config_.fail_open ? Mode::kFailOpen : Mode::kFailClose, why);
}

asio::awaitable<void> SharedQuota::Heartbeat(std::shared_ptr<Shared> shared) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const std::string id =
      fmt::format("{}-{}-{:x}", ::getpid(), clock_.Now(), std::random_device{}());
  const Seconds budget_s = std::max(4 * config_.decision_budget_s, 0.05);
  const std::string where = fmt::format("Redis at {}", config_.redis);
  bool first = true;
  for (;;) {
    if (!first) {
      timer.expires_after(Duration(shared->ready ? 1.0 : 0.25));
      co_await timer.async_wait(asio::use_awaitable);
    }
    first = false;
    if (shared->stop) {
      co_return;
    }
    if (!redis_->connected()) {
      // (A first connection may still be on its way.)
      timer.expires_after(Duration(0.02));
      co_await timer.async_wait(asio::use_awaitable);
      if (shared->stop) {
        co_return;
      }
      if (!redis_->connected()) {
        const std::string error = redis_->last_error();
        Unavailable(fmt::format("{} is unreachable{}", where, error.empty() ? "" : ": " + error));
        continue;
      }
    }
    const std::int64_t connection = redis_->connects();
    bool loaded = false;
    {
      const std::lock_guard lock(shared->mu);
      loaded = shared->loaded_for == connection;
    }
    if (!loaded) {
      std::string error;
      const std::string quota = co_await LoadScript(
          config_.fixed_window ? kFixedWindowScript : kQuotaScript, budget_s, &error);
      std::string adjust;  // (no co_await inside a conditional expression: GCC 12 miscompiles it)
      if (!quota.empty()) {
        adjust = co_await LoadScript(kAdjustScript, budget_s, &error);
      }
      if (shared->stop) {
        co_return;
      }
      if (quota.empty() || adjust.empty()) {
        if (error.empty()) {
          redis_->Reset();  // connected, but not answering: a new connection
        }
        Unavailable(error.empty() ? fmt::format("{} does not answer", where)
                                  : fmt::format("{} did not load the scripts: {}", where, error));
        continue;
      }
      const std::lock_guard lock(shared->mu);
      shared->quota_sha = quota;
      shared->adjust_sha = adjust;
      shared->loaded_for = connection;
    }
    std::vector<std::string> heartbeat = {
        "EVAL", kHeartbeatScript, "1", fmt::format("{}:gateways", config_.key_prefix), id, "3"};
    const std::optional<net::RedisReply> r =
        co_await redis_->Command(std::move(heartbeat), budget_s);
    if (shared->stop) {
      co_return;
    }
    if (!r.has_value()) {
      redis_->Reset();
      Unavailable(fmt::format("{} does not answer", where));
      continue;
    }
    if (r->type != net::RedisReply::Type::kInteger) {
      Unavailable(fmt::format("{} answered the heartbeat with an error: {}", where, r->str));
      continue;
    }
    gateways_ = static_cast<std::int32_t>(std::max<long long>(1, r->integer));
    metrics_.rate_limit_gateways->Set(gateways_.load());
    misses_ = 0;
    shared->ready = true;
    SetMode(Mode::kShared, fmt::format("{} answers", where));
  }
}

asio::awaitable<std::string> SharedQuota::LoadScript(const std::string& script, Seconds budget_s,
                                                     std::string* error) {
  std::vector<std::string> load = {"SCRIPT", "LOAD", script};
  const std::optional<net::RedisReply> r = co_await redis_->Command(std::move(load), budget_s);
  if (!r.has_value() || r->type != net::RedisReply::Type::kString) {
    if (r.has_value()) {
      *error = r->str;
    }
    co_return std::string();
  }
  co_return r->str;
}

double SharedQuota::Share() const {
  return config_.shared() ? 1.0 / std::max(1, gateways_.load()) : 1.0;
}

QuotaVerdict SharedQuota::DecideLocally(const TenantQuotaLimits& limits, const QuotaAsk& ask) {
  const std::lock_guard lock(mu_);
  return {local_.Decide(limits, ask, clock_.Now(), Share()), false};
}

QuotaVerdict SharedQuota::Count(std::string_view source, QuotaVerdict v) {
  metrics_.rate_limit_decisions_total
      ->With({std::string(source), v.allowed() ? "allowed" : "refused"})
      .Inc();
  return v;
}

std::vector<std::string> SharedQuota::ScriptArgs(const TenantQuotaLimits& limits,
                                                 const QuotaAsk& ask) const {
  std::vector<std::string> argv;
  if (config_.fixed_window) {
    argv = {"1", Key(ask.tenant, "requests_window"), "0",
            fmt::format("{}", limits.requests ? limits.requests->rate_per_s : 1e18)};
    return argv;
  }
  argv = {"4",
          Key(ask.tenant, "requests"),
          Key(ask.tenant, "tokens"),
          Key(ask.tenant, "retries"),
          Key(ask.tenant, fmt::format("seen:{}", ask.identity)),
          "0",
          ask.identity.empty() ? "0" : fmt::format("{:.0f}", config_.retry_window_s * 1000)};
  PushLimit(limits.requests, ask.request_cost, &argv);
  PushLimit(limits.tokens, ask.tokens, &argv);
  PushLimit(limits.retries, 1, &argv);
  return argv;
}

asio::awaitable<std::optional<net::RedisReply>> SharedQuota::RunQuotaScript(
    const TenantQuotaLimits& limits, const QuotaAsk& ask) {
  std::string sha;
  {
    const std::lock_guard lock(shared_->mu);
    sha = shared_->quota_sha;
  }
  const Seconds start = clock_.Now();
  std::vector<std::string> argv = ScriptArgs(limits, ask);
  std::vector<std::string> evalsha = {"EVALSHA", sha};
  evalsha.insert(evalsha.end(), argv.begin(), argv.end());
  std::optional<net::RedisReply> r =
      co_await redis_->Command(std::move(evalsha), config_.decision_budget_s);
  if (r.has_value() && r->type == net::RedisReply::Type::kError && r->str.starts_with("NOSCRIPT")) {
    // The scripts are gone (SCRIPT FLUSH, a failover): the script itself, which Redis keeps
    // again, within what is left of the budget; the heartbeat loads them anew.
    {
      const std::lock_guard lock(shared_->mu);
      shared_->loaded_for = -1;
    }
    const Seconds left_s = config_.decision_budget_s - (clock_.Now() - start);
    if (left_s > 0) {
      std::vector<std::string> eval = {"EVAL",
                                       config_.fixed_window ? kFixedWindowScript : kQuotaScript};
      eval.insert(eval.end(), argv.begin(), argv.end());
      r = co_await redis_->Command(std::move(eval), left_s);
    }
  }
  if (r.has_value() && r->type != net::RedisReply::Type::kError) {
    metrics_.rate_limit_decision_seconds->Observe(clock_.Now() - start);
  }
  co_return r;
}

asio::awaitable<QuotaVerdict> SharedQuota::Decide(const TenantQuotaLimits& limits, QuotaAsk ask) {
  if (!config_.shared()) {
    ask.request_cost = 0;  // (the door's bucket, at the request's head)
    co_return Count("local", DecideLocally(limits, ask));
  }
  if (!limits.any()) {
    co_return QuotaVerdict{};
  }
  if (shared_->ready) {
    const std::optional<net::RedisReply> r = co_await RunQuotaScript(limits, ask);
    std::optional<QuotaDecision> d = r.has_value() ? ParseVerdict(*r) : std::nullopt;
    if (d.has_value()) {
      misses_ = 0;
      if (d->allowed()) {
        if (limits.tokens.has_value()) {
          d->tokens_charged = std::min(ask.tokens, limits.tokens->burst);
        }
        // The local mirror spends it too (this gateway's share), ready for a fall back.
        const std::lock_guard lock(mu_);
        local_.Charge(limits, ask, clock_.Now(), Share());
      }
      co_return Count("shared", QuotaVerdict{*d, false});
    }
    // Not decided in Redis: this request is decided as the unavailable mode says; the mode
    // changes (and requests stop waiting for Redis) on a lost connection, an error, or
    // kMissesBeforeUnavailable answers in a row over budget.
    if (r.has_value()) {
      Unavailable(fmt::format("Redis at {} answered an error: {}", config_.redis, r->str));
    } else if (!redis_->connected()) {
      Unavailable(fmt::format("Redis at {} is unreachable", config_.redis));
    } else if (misses_.fetch_add(1) + 1 >= kMissesBeforeUnavailable) {
      Unavailable(fmt::format("{} answers in a row from Redis at {} over the {:g} ms budget",
                              kMissesBeforeUnavailable, config_.redis,
                              config_.decision_budget_s * 1000));
    }
  }
  if (config_.fail_open) {
    co_return Count("fail_open", DecideLocally(limits, ask));
  }
  QuotaVerdict v;
  v.unavailable = true;
  v.decision.retry_after_s = 1;
  co_return Count("fail_close", v);
}

void SharedQuota::AdjustTokens(const TenantQuotaLimits& limits, std::string_view tenant,
                               double delta) {
  if (!limits.tokens.has_value() || delta == 0) {
    return;
  }
  {
    const std::lock_guard lock(mu_);
    local_.AdjustTokens(limits, tenant, delta, clock_.Now(), Share());
  }
  if (config_.shared() && shared_->ready) {
    std::string sha;
    {
      const std::lock_guard lock(shared_->mu);
      sha = shared_->adjust_sha;
    }
    redis_->Send({"EVALSHA", sha, "1", Key(tenant, "tokens"), "0",
                  fmt::format("{}", limits.tokens->rate_per_s), fmt::format("{}", delta)});
  }
}

}  // namespace spillway::gateway
