// The tenant quotas of a completion request, decided once its body is parsed
// (gateway_handler.h: QuotaLimitsFor, DecideQuota; gateway/shared_quota.h decides them).

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/awaitable.hpp>
#include <cmath>

#include "api/overload_contract.h"
#include "gateway/gateway_handler.h"
#include "server/refusal_replies.h"

namespace spillway::gateway {

namespace {
namespace asio = boost::asio;
}  // namespace

TenantQuotaLimits GatewayHandler::QuotaLimitsFor(std::string_view tenant) {
  const std::lock_guard lock(door_mu_);
  const auto it = quota_limits_.find(tenant);
  return it != quota_limits_.end() ? it->second : TenantQuotaLimits{};
}

asio::awaitable<bool> GatewayHandler::DecideQuota(net::HttpConnection& conn,
                                                  const std::string& model,
                                                  const server::ApiKey& key,
                                                  const TenantQuotaLimits& limits,
                                                  double reserved_tokens, double* charged_tokens) {
  const net::Request& request = conn.request();
  const auto idempotency = request["Idempotency-Key"];
  const std::string identity =
      RequestIdentity({idempotency.data(), idempotency.size()}, request.body());
  const QuotaVerdict v =
      co_await quota_->Decide(limits, QuotaAsk{key.tenant, reserved_tokens, identity});
  if (v.decision.retry) {
    metrics_.tenant_retries_total->With({key.tenant}).Inc();
  }
  if (v.allowed()) {
    *charged_tokens = v.decision.tokens_charged;
    co_return true;
  }
  const std::string reason(v.reason());
  metrics_.requests_total->With({model, "429", reason, "gateway"}).Inc();
  metrics_.tenant_refusals_total->With({key.tenant, reason}).Inc();
  const double retry_after_s = std::max(1.0, std::ceil(v.decision.retry_after_s));
  if (!v.unavailable && v.decision.refused_by == QuotaLimit::kRequests) {
    // The shared request rate: the door's refusal, as the door words it (X-RateLimit-Reset).
    AdmissionDecision d;
    d.verdict = Verdict::kShed;
    d.reason = OverloadReason::kRateLimited;
    d.retry_after_s = retry_after_s;
    const GatewayConfig& config = *state_.Get()->config;
    co_await SendError(conn,
                       server::OverloadError(d, config.router.ttft_slo_s, config.request_timeout_s),
                       server::OverloadHeaders(d));
    co_return false;
  }
  const std::string message =
      v.unavailable ? "The shared rate limiter is unavailable and this gateway fails closed."
      : v.decision.refused_by == QuotaLimit::kTokens
          ? fmt::format(
                "The tenant's token rate is spent ({:.0f} tokens reserved: the prompt "
                "and max_tokens).",
                reserved_tokens)
          : "The tenant's retries are over its retry rate.";
  co_await SendError(conn, server::ContractError(reason, message),
                     api::ContractHeaders(reason, retry_after_s));
  co_return false;
}

}  // namespace spillway::gateway
