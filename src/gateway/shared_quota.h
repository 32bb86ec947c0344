#pragma once
// The tenants' quotas at the gateway (admission/tenant_quota.h: request, token and retry
// rates), decided in the shared Redis when rate_limit.redis is set, so that one tenant's limit
// holds across every gateway replica, else in this gateway's memory.
//
// Modes (the rate_limiter_mode gauge says which is in force; a line on stderr says when it
// changes):
//   local       no Redis configured: this gateway's own quotas (the request rate is the
//               door's token bucket, decided at the request's head);
//   shared      one Lua script in Redis decides all of a request's limits atomically
//               (gateway/quota_script.h), within rate_limit.decision_budget_s;
//   fail_open   Redis unreachable, over budget or erring: the local quotas at each rate and
//               burst divided by the number of gateways (as Redis last counted them);
//   fail_close  the same, but every limited tenant's request is refused (429
//               rate_limiter_unavailable).
// A heartbeat (every second; every 0.25 s while Redis is unavailable) registers this gateway,
// counts the others, loads the scripts on every new connection, and brings the shared mode
// back as soon as Redis answers it; until then requests do not wait for Redis.
//
// Thread-safety: every member function may be called from any thread.

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "admission/tenant_quota.h"
#include "config/server_config.h"
#include "gateway/gateway_config.h"
#include "gateway/gateway_metrics.h"
#include "net/clock.h"
#include "net/redis_client.h"

namespace spillway::gateway {

/// The limits of each tenant the keys name (the first key of a tenant that sets a rate sets
/// it); `requests` only when `with_requests` (the shared modes decide it; alone, the door does).
std::map<std::string, TenantQuotaLimits, std::less<>> QuotaLimitsOf(
    const std::map<std::string, server::ApiKey>& keys, bool with_requests);

/// A request's identity for retry detection: its Idempotency-Key header when it sends one,
/// else its body; as a 64-bit FNV-1a digest in hex (the same in every gateway).
std::string RequestIdentity(std::string_view idempotency_key, std::string_view body);

/// The Redis key of `tenant`'s `what` (requests, tokens, retries, seen:ID): PREFIX:{TENANT}:WHAT,
/// the tenant's braces and % escaped (%7B, %7D, %25) so that {TENANT} is the whole tenant, one
/// Redis Cluster hash slot a tenant.
std::string QuotaKey(std::string_view prefix, std::string_view tenant, std::string_view what);

/// One decision and where it was made.
struct QuotaVerdict {
  QuotaDecision decision;
  /// Refused because Redis is unavailable and the mode is fail_close.
  bool unavailable = false;
  /// The overload-contract token of a refusal ("" when allowed).
  std::string_view reason() const {
    return unavailable ? "rate_limiter_unavailable" : QuotaReason(decision.refused_by);
  }
  bool allowed() const { return !unavailable && decision.allowed(); }
};

class SharedQuota {
 public:
  enum class Mode : std::uint8_t { kLocal, kShared, kFailOpen, kFailClose };

  /// Connects to config.redis (when set) on `executor` and starts the heartbeat.
  SharedQuota(const boost::asio::any_io_executor& executor, const RateLimitConfig& config,
              GatewayMetrics& metrics, const net::SteadyClock& clock);
  ~SharedQuota();
  SharedQuota(const SharedQuota&) = delete;
  SharedQuota& operator=(const SharedQuota&) = delete;

  /// Decides `ask` for a tenant with `limits` (QuotaLimitsOf with requests when shared).
  boost::asio::awaitable<QuotaVerdict> Decide(const TenantQuotaLimits& limits, QuotaAsk ask);

  /// Corrects a token reservation of `tenant` by `delta` tokens once the reply's usage is known
  /// (not waited for).
  void AdjustTokens(const TenantQuotaLimits& limits, std::string_view tenant, double delta);

  Mode mode() const { return mode_.load(); }
  static std::string_view ToString(Mode mode);

 private:
  struct Shared;  // the heartbeat's and the decisions' common state
  /// Answers over budget in a row that put the gateway in the unavailable mode (fewer: that
  /// request alone is decided as the mode says).
  static constexpr std::int32_t kMissesBeforeUnavailable = 3;

  boost::asio::awaitable<void> Heartbeat(std::shared_ptr<Shared> shared);
  /// SCRIPT LOAD `script`: its SHA1, or "" (with Redis's `error`, if it answered one) when
  /// Redis did not load it within `budget_s`.
  boost::asio::awaitable<std::string> LoadScript(const std::string& script, Seconds budget_s,
                                                 std::string* error);
  /// The quota script's keys and arguments for `ask` (after EVALSHA SHA).
  std::vector<std::string> ScriptArgs(const TenantQuotaLimits& limits, const QuotaAsk& ask) const;
  /// Runs the quota script (EVALSHA; the script itself after NOSCRIPT) within the budget:
  /// Redis's reply, or nullopt.
  boost::asio::awaitable<std::optional<net::RedisReply>> RunQuotaScript(
      const TenantQuotaLimits& limits, const QuotaAsk& ask);
  /// The local decision: alone, or fail-open at Share() of each rate.
  QuotaVerdict DecideLocally(const TenantQuotaLimits& limits, const QuotaAsk& ask);
  /// 1 alone; 1/N for N gateways sharing Redis.
  double Share() const;
  void SetMode(Mode mode, std::string_view why);
  /// Redis cannot decide: the unavailable mode the config names, saying `why`.
  void Unavailable(std::string_view why);
  /// Counts `v` in rate_limit_decisions_total{source, result}, and returns it.
  QuotaVerdict Count(std::string_view source, QuotaVerdict v);
  std::string Key(std::string_view tenant, std::string_view what) const;

  const RateLimitConfig config_;
  GatewayMetrics& metrics_;
  const net::SteadyClock& clock_;
  std::unique_ptr<net::RedisClient> redis_;
  std::shared_ptr<Shared> shared_;
  std::atomic<Mode> mode_;
  std::atomic<std::int32_t> gateways_;
  std::atomic<std::int32_t> misses_{0};
  std::mutex mu_;
  TenantQuota local_;  ///< under mu_: alone, the quotas; shared, the fall back's mirror
  std::mutex log_mu_;
  bool logged_ = false;  ///< under log_mu_
  std::string last_why_;
  Seconds last_log_s_ = 0;
};

}  // namespace spillway::gateway
