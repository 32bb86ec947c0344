#include "routing/pool.h"

#include <algorithm>

namespace spillway::routing {

std::string_view ToString(RetryDenial denial) {
  switch (denial) {
    case RetryDenial::kNone:
      return "";
    case RetryDenial::kAttempts:
      return "attempts";
    case RetryDenial::kNoEndpoint:
      return "no_endpoint";
    case RetryDenial::kBudget:
      return "budget";
  }
  return "";
}

Pool::Pool(std::vector<EndpointState> endpoints, PoolConfig config)
    : router_(config.router),
      endpoints_(std::move(endpoints)),
      health_(endpoints_.size(), config.health),
      retry_(config.retry),
      budget_(config.retry.budget_ratio, config.retry.budget_window_s, config.retry.min_retries),
      queue_(QueueSettings(config)),
      errors_(config.prediction),
      fair_share_(config.fair_share),
      prefixes_(config.router.prefix.capacity_blocks) {}

WaitQueueConfig Pool::QueueSettings(const PoolConfig& config) {
  return config.router.policy == RouterPolicy::kGateway ? config.queue : WaitQueueConfig{0, 0, 1};
}

std::size_t Pool::AddEndpoint(EndpointState endpoint) {
  endpoints_.push_back(std::move(endpoint));
  return health_.AddEndpoint();
}

void Pool::SetRemoved(std::size_t i, bool removed, Seconds now) {
  health_.SetRemoved(i, removed);
  Refresh(i, now);
  prefixes_.Forget(i);  // what it held before is no guide to what it holds now
}

void Pool::Reconfigure(const PoolConfig& config) {
  router_ = Router(config.router);
  prefixes_.set_capacity(config.router.prefix.capacity_blocks);
  health_.set_config(config.health);
  retry_ = config.retry;
  budget_.Reconfigure(config.retry.budget_ratio, config.retry.budget_window_s,
                      config.retry.min_retries);
  queue_.set_config(QueueSettings(config));
  errors_.set_quantile(config.prediction.quantile);
  fair_share_.set_config(config.fair_share);
}

void Pool::OnReceived(Seconds now) { budget_.OnRequest(now); }

Pool::Pick Pool::Route(const RouteRequest& request, Seconds now) {
  for (std::size_t i = 0; i < endpoints_.size(); ++i) {
    Refresh(i, now);  // ejections end with time
  }
  Pick pick;
  const Seconds margin_s = errors_.margin_s();
  const PrefixIndex* prefixes = router_.config().prefix.enabled ? &prefixes_ : nullptr;
  if (margin_s > 0) {
    RouteRequest tighter = request;
    const Seconds slo = request.ttft_slo_s.value_or(router_.config().ttft_slo_s);
    tighter.ttft_slo_s = std::max(slo - margin_s, slo * 0.5);
    pick.decision = router_.Route(tighter, endpoints_, now, prefixes);
  } else {
    pick.decision = router_.Route(request, endpoints_, now, prefixes);
  }
  if (pick.decision.forwarded()) {
    const auto i = static_cast<std::size_t>(pick.decision.endpoint);
    EndpointState& e = endpoints_[i];
    // A request believed to hit the cache does not measure prefill throughput.
    pick.alone = e.QueueAhead(router_.Fresh(e, now)) <= 0 && e.in_flight() == 0 &&
                 pick.decision.cached_tokens == 0;
    e.OnForward(now);
    if (prefixes != nullptr && request.prefix_blocks != nullptr) {
      prefixes_.Record(i, *request.prefix_blocks);
    }
    fair_share_.OnAdmitted(request.flow, now);  // (no-op when off)
  }
  return pick;
}

Pool::Placement Pool::Admit(Ticket ticket, const RouteRequest& request, Seconds now) {
  Placement out;
  out.ticket = ticket;
  if (fair_share_.enabled()) {
    fair_share_.OnOffered(request.flow, now);
    if (fair_share_.ShouldYield(request.flow, now)) {
      out.pick.decision.verdict = Verdict::kShed;
      out.pick.decision.reason = OverloadReason::kFairShare;
      out.pick.decision.retry_after_s = 1;
      return out;
    }
  }
  const Seconds slo_s = request.ttft_slo_s.value_or(router_.config().ttft_slo_s);
  const bool queue_on = queue_.enabled() && FitsAlone(request, slo_s);
  const bool behind_others = queue_on && queue_.AnyAsUrgent(request.priority, now);
  if (!behind_others) {
    out.pick = Route(request, now);
  }
  if (behind_others ||
      (queue_on && request.may_wait && out.pick.decision.verdict == Verdict::kShed)) {
    if (const std::optional<Seconds> expires_s =
            request.may_wait ? queue_.Push(ticket, request, slo_s, now) : std::nullopt) {
      out.kind = Placement::Kind::kQueued;
      out.pick = {};
      out.expires_s = *expires_s;
    } else if (behind_others) {  // full, and others go first
      out.pick.decision.verdict = Verdict::kShed;
      out.pick.decision.reason = OverloadReason::kQueueDelayExceeded;
      out.pick.decision.retry_after_s = DrainTime(now);
    }
  }
  CountFlow(request.flow, out, now);
  return out;
}

std::optional<Pool::Placement> Pool::DispatchNext(Seconds now) {
  if (const WaitQueue::Entry* e = queue_.Expired(now)) {
    Placement out =
        Left(Placement::Kind::kExpired, *queue_.Remove(e->ticket), ExpiredPick(now), now);
    CountFlow(out.request.flow, out, now);
    return out;
  }
  const WaitQueue::Entry* next = queue_.Next(now);
  if (next == nullptr) {
    return std::nullopt;
  }
  RouteRequest request = next->request;
  request.ttft_slo_s = next->slo_s - (now - next->enqueued_s);  // what is left of its budget
  const Pick pick = Route(request, now);
  if (pick.decision.verdict == Verdict::kShed) {
    return std::nullopt;  // keeps waiting (until a slot frees or its TTL passes)
  }
  Placement out = Left(Placement::Kind::kRouted, *queue_.Remove(next->ticket), pick, now);
  CountFlow(out.request.flow, out, now);
  return out;
}

std::optional<Pool::Placement> Pool::ExpireWaiting(Ticket ticket, Seconds now) {
  const std::optional<WaitQueue::Entry> gone = queue_.Remove(ticket);
  if (!gone.has_value()) {
    return std::nullopt;
  }
  Placement out = Left(Placement::Kind::kExpired, *gone, ExpiredPick(now), now);
  CountFlow(out.request.flow, out, now);
  return out;
}

void Pool::CountFlow(const std::string& flow, const Placement& placement, Seconds now) {
  if (!fair_share_.enabled() || placement.kind == Placement::Kind::kQueued) {
    return;  // a waiting request counts when it leaves the queue
  }
  if (placement.kind == Placement::Kind::kExpired ||
      placement.pick.decision.verdict == Verdict::kShed) {
    fair_share_.OnRefusedForLoad(flow, now);
  }
}

void Pool::OnEndpointRefused(const std::string& flow, bool for_load, Seconds now) {
  fair_share_.OnAdmissionWithdrawn(flow, now);
  if (for_load) {
    fair_share_.OnRefusedForLoad(flow, now);
  }
}

std::vector<FlowShare> Pool::FlowShares(Seconds now) const {
  return fair_share_.enabled() ? fair_share_.Shares(now) : std::vector<FlowShare>{};
}

std::vector<Pool::Placement> Pool::DrainWaiting(Seconds now) {
  Pick draining;
  draining.decision.verdict = Verdict::kHardLimit;
  draining.decision.reason = OverloadReason::kDraining;
  draining.decision.retry_after_s = 1;
  std::vector<Placement> out;
  while (const WaitQueue::Entry* next = queue_.Next(now)) {
    out.push_back(Left(Placement::Kind::kRouted, *queue_.Remove(next->ticket), draining, now));
  }
  return out;
}

Pool::Placement Pool::Left(Placement::Kind kind, const WaitQueue::Entry& entry, const Pick& pick,
                           Seconds now) {
  return Placement{kind,         entry.ticket, pick, now - entry.enqueued_s, entry.expires_s,
                   entry.request};
}

bool Pool::FitsAlone(const RouteRequest& request, Seconds slo_s) const {
  return std::any_of(endpoints_.begin(), endpoints_.end(), [&](const EndpointState& e) {
    return e.takes_work() && e.PrefillRate() > 0 &&
           static_cast<double>(request.prompt_tokens) / e.PrefillRate() <= slo_s;
  });
}

Pool::Pick Pool::ExpiredPick(Seconds now) const {
  Pick pick;
  pick.decision.verdict = Verdict::kShed;
  pick.decision.reason = OverloadReason::kQueueDeadlineExceeded;
  pick.decision.retry_after_s = DrainTime(now);
  return pick;
}

bool Pool::MayRetry(RouteRequest* request, std::int32_t endpoint, std::int32_t attempts,
                    Seconds now, RetryDenial* why) {
  request->exclude.push_back(endpoint);
  RetryDenial denial = RetryDenial::kNone;
  if (attempts >= retry_.max_attempts) {
    denial = RetryDenial::kAttempts;
  } else {
    bool any = false;
    for (std::size_t i = 0; i < endpoints_.size() && !any; ++i) {
      const bool excluded = std::find(request->exclude.begin(), request->exclude.end(),
                                      static_cast<std::int32_t>(i)) != request->exclude.end();
      any = !excluded && health_.HealthAt(i, now) == EndpointHealth::kHealthy;
    }
    if (!any) {
      denial = RetryDenial::kNoEndpoint;
    } else if (!budget_.TryRetry(now)) {
      denial = RetryDenial::kBudget;
    }
  }
  if (why != nullptr) {
    *why = denial;
  }
  return denial == RetryDenial::kNone;
}

void Pool::OnFirstToken(std::size_t i, std::int32_t prompt_tokens, Seconds ttft_s, bool alone,
                        Seconds predicted_ttft_s) {
  endpoints_[i].OnFirstToken(prompt_tokens, ttft_s, alone);
  if (predicted_ttft_s > 0) {
    errors_.Add(ttft_s - predicted_ttft_s);
  }
}

void Pool::OnFinish(std::size_t i, Seconds now, bool completed) {
  endpoints_[i].OnFinish(now, completed);
}

void Pool::OnNotStarted(std::size_t i, const RouteRequest& request) {
  if (request.prefix_blocks != nullptr) {
    prefixes_.Drop(i, *request.prefix_blocks);
  }
}

void Pool::OnScrape(std::size_t i, const EndpointLoad& load, Seconds now) {
  endpoints_[i].OnScrape(load, now);
}

void Pool::OnProbe(std::size_t i, ProbeResult result, Seconds now) {
  health_.OnProbe(i, result);
  Refresh(i, now);
}

void Pool::OnDraining(std::size_t i, Seconds now) {
  health_.OnDraining(i);
  Refresh(i, now);
}

void Pool::OnError(std::size_t i, Seconds now) {
  health_.OnError(i, now);
  Refresh(i, now);
}

void Pool::OnSuccess(std::size_t i) { health_.OnSuccess(i); }

bool Pool::Stale(std::size_t i, Seconds now) const {
  return endpoints_[i].exports_metrics() && !router_.Fresh(endpoints_[i], now);
}

}  // namespace spillway::routing
