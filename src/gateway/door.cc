// The tenant's door of a completion request: what its head decides before the body is read
// (Head: the API key, the framing, the priority header, draining, the tenant's bucket), and the
// tenant's quotas once the body is parsed (QuotaLimitsFor, DecideQuota; gateway/shared_quota.h
// decides them). gateway_handler.h states the contract.

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/field.hpp>
#include <cmath>

#include "api/overload_contract.h"
#include "api/responses.h"
#include "api/routes.h"
#include "gateway/gateway_handler.h"
#include "server/api_keys.h"
#include "server/refusal_replies.h"

namespace spillway::gateway {

namespace {
namespace asio = boost::asio;
namespace http = boost::beast::http;
using server::Error;
}  // namespace

std::optional<net::EarlyReply> GatewayHandler::Head(const net::Request& head) {
  if (head.method() != http::verb::post ||
      !api::IsCompletionsPath(api::PathOf({head.target().data(), head.target().size()}))) {
    return std::nullopt;
  }
  auto early = [this](const api::ApiError& e, std::string_view reason, net::Headers headers = {}) {
    metrics_.requests_total
        ->With({"", std::to_string(e.http_status), std::string(reason), "gateway"})
        .Inc();
    return net::EarlyReply{static_cast<unsigned>(e.http_status), api::ErrorJson(e),
                           std::move(headers)};
  };
  const std::shared_ptr<const GatewayState> state = state_.Get();
  const GatewayConfig& config = *state->config;
  // As serve decides them (ApiHandler::Head): who asks (the API key), the framing, how
  // urgently, whether the gateway still takes work, and at what rate (the tenant's bucket).
  const auto auth = head[http::field::authorization];
  const server::ApiKey* key =
      server::FindApiKey(config.api_keys, std::string_view(auth.data(), auth.size()));
  if (key == nullptr) {
    return early(server::Unauthorized(), "invalid_api_key");
  }
  // A POST with neither Content-Length nor chunked framing has no body (RFC 9112 §6.3).
  if (!head.has_content_length() && !head.chunked()) {
    return early(Error(411, "The request needs a JSON body with Content-Length.",
                       "invalid_request_error", "length_required"),
                 "length_required");
  }
  if (const auto h = head["X-Priority-Class"];
      !server::PriorityFor(*key, std::string_view(h.data(), h.size()))) {
    return early(server::InvalidPriority(), "invalid_priority");
  }
  if (draining_.load()) {
    return early(server::ContractError("draining", "The gateway is shutting down."), "draining",
                 api::ContractHeaders("draining", 1));
  }
  AdmissionDecision bucket;
  {
    const std::lock_guard lock(door_mu_);
    bucket = door_->DecideRateLimit(AdmissionRequest{key->tenant, 0, 0}, clock_.Now());
  }
  if (!bucket.admitted()) {
    metrics_.tenant_refusals_total->With({key->tenant, "rate_limited"}).Inc();
    return early(server::OverloadError(bucket, config.router.ttft_slo_s, config.request_timeout_s),
                 "rate_limited", server::OverloadHeaders(bucket));
  }
  return std::nullopt;
}

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
