#include "admission/tenant_quota.h"

#include <algorithm>
#include <array>

#include "core/check.h"

namespace spillway {

std::string_view QuotaReason(QuotaLimit limit) {
  switch (limit) {
    case QuotaLimit::kRequests:
      return "rate_limited";
    case QuotaLimit::kTokens:
      return "token_rate_limited";
    case QuotaLimit::kRetries:
      return "retry_rate_limited";
    case QuotaLimit::kNone:
      break;
  }
  return "";
}

GcraLimit ScaledLimit(const GcraLimit& limit, double share) {
  return {limit.rate_per_s * share, std::max(1.0, limit.burst * share)};
}

TenantQuota::TenantQuota(Seconds retry_window_s, std::size_t max_identities)
    : retry_window_s_(retry_window_s), max_identities_(max_identities) {
  SPILLWAY_CHECK(retry_window_s > 0 && max_identities > 0);
}

bool TenantQuota::SeenBefore(std::string_view tenant, std::string_view identity, Seconds now) {
  std::string key(tenant);
  key.append(1, '\n').append(identity);
  while (!order_.empty() &&
         (order_.front().second + retry_window_s_ <= now || order_.size() > max_identities_)) {
    const auto it = seen_.find(order_.front().first);
    if (it != seen_.end() && it->second == order_.front().second) {
      seen_.erase(it);
    }
    order_.pop_front();
  }
  const auto it = seen_.find(key);
  const bool seen = it != seen_.end() && it->second + retry_window_s_ > now;
  seen_[key] = now;
  order_.emplace_back(key, now);
  return seen;
}

QuotaDecision TenantQuota::Decide(const TenantQuotaLimits& l, const QuotaAsk& ask, Seconds now,
                                  double share) {
  SPILLWAY_CHECK(share > 0 && share <= 1);
  QuotaDecision d;
  d.retry = !ask.identity.empty() && SeenBefore(ask.tenant, ask.identity, now);
  State& state = state_.try_emplace(std::string(ask.tenant)).first->second;
  struct Check {
    QuotaLimit limit;
    const std::optional<GcraLimit>* config;
    Seconds* tat;
    double cost;
  };
  const std::array<Check, 3> checks = {{
      {QuotaLimit::kRequests, &l.requests, &state.requests_tat,
       static_cast<double>(ask.request_cost)},
      {QuotaLimit::kTokens, &l.tokens, &state.tokens_tat, ask.tokens},
      {QuotaLimit::kRetries, &l.retries, &state.retries_tat, d.retry ? 1.0 : 0.0},
  }};
  std::array<Seconds, 3> next{};
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const Check& c = checks[i];
    next[i] = *c.tat;
    if (!c.config->has_value() || c.cost <= 0) {
      continue;
    }
    const GcraDecision g = GcraDecide(*c.tat, now, ScaledLimit(**c.config, share), c.cost);
    if (!g.allowed) {
      d.refused_by = c.limit;
      d.retry_after_s = g.retry_after_s;
      return d;
    }
    next[i] = g.tat;
  }
  for (std::size_t i = 0; i < checks.size(); ++i) {
    *checks[i].tat = next[i];
  }
  if (l.tokens.has_value()) {
    d.tokens_charged = std::min(ask.tokens, ScaledLimit(*l.tokens, share).burst);
  }
  return d;
}

void TenantQuota::Charge(const TenantQuotaLimits& l, const QuotaAsk& ask, Seconds now,
                         double share) {
  SPILLWAY_CHECK(share > 0 && share <= 1);
  const bool retry = !ask.identity.empty() && SeenBefore(ask.tenant, ask.identity, now);
  State& state = state_.try_emplace(std::string(ask.tenant)).first->second;
  // (At most empty, never in debt: a share that was too small for a while, or a gateway that
  // took more than its share, must not starve the fall back.)
  const auto spend = [&](const std::optional<GcraLimit>& limit, Seconds* tat, double cost) {
    if (limit.has_value() && cost > 0) {
      const GcraLimit scaled = ScaledLimit(*limit, share);
      *tat = std::min(GcraAdjust(*tat, now, scaled, std::min(cost, scaled.burst)),
                      now + scaled.burst / scaled.rate_per_s);
    }
  };
  spend(l.requests, &state.requests_tat, ask.request_cost);
  spend(l.tokens, &state.tokens_tat, ask.tokens);
  spend(l.retries, &state.retries_tat, retry ? 1.0 : 0.0);
}

void TenantQuota::AdjustTokens(const TenantQuotaLimits& limits, std::string_view tenant,
                               double delta, Seconds now, double share) {
  const auto state = state_.find(tenant);
  if (state == state_.end() || !limits.tokens.has_value()) {
    return;
  }
  state->second.tokens_tat =
      GcraAdjust(state->second.tokens_tat, now, ScaledLimit(*limits.tokens, share), delta);
}

}  // namespace spillway
