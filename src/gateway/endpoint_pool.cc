#include "gateway/endpoint_pool.h"

#include <algorithm>
#include <boost/asio/post.hpp>

#include "core/check.h"

namespace spillway::gateway {
namespace {

routing::EndpointState StateOf(const Upstream& u) {
  const bool exports = !u.kind.has_value() || routing::ExportsMetrics(*u.kind);
  return {u.url, exports, u.priors};
}

std::vector<routing::EndpointState> StatesOf(const std::vector<Upstream>& upstreams) {
  std::vector<routing::EndpointState> states;
  for (const Upstream& u : upstreams) {
    states.push_back(StateOf(u));
  }
  return states;
}

}  // namespace

EndpointPool::EndpointPool(std::string model, std::vector<Upstream> upstreams,
                           const GatewayConfig& config)
    : model_(std::move(model)), pool_(StatesOf(upstreams), config.PoolSettings()) {
  for (Upstream& u : upstreams) {
    kinds_.push_back(u.kind);
    generations_.push_back(1);
    upstreams_.push_back(std::make_shared<const Upstream>(std::move(u)));
  }
}

std::size_t EndpointPool::size() const {
  const std::lock_guard lock(mu_);
  return upstreams_.size();
}

std::shared_ptr<const Upstream> EndpointPool::upstream(std::size_t i) const {
  const std::lock_guard lock(mu_);
  return upstreams_[i];
}

EndpointPool::Changes EndpointPool::Update(std::vector<Upstream> wanted,
                                           const GatewayConfig& config, Seconds now) {
  const std::lock_guard lock(mu_);
  Changes changes;
  pool_.Reconfigure(config.PoolSettings());
  for (std::size_t i = 0; i < upstreams_.size(); ++i) {
    const std::string key = upstreams_[i]->target.Key();
    const bool kept = std::any_of(wanted.begin(), wanted.end(),
                                  [&](const Upstream& u) { return u.target.Key() == key; });
    if (!kept && !pool_.removed(i)) {
      pool_.SetRemoved(i, true, now);
      ++generations_[i];  // its loops end
      ++changes.removed;
    }
  }
  for (Upstream& u : wanted) {
    const std::string key = u.target.Key();
    const auto at = std::find_if(upstreams_.begin(), upstreams_.end(),
                                 [&](const auto& have) { return have->target.Key() == key; });
    if (at == upstreams_.end()) {
      changes.started.push_back({pool_.AddEndpoint(StateOf(u)), 1});
      kinds_.push_back(u.kind);
      generations_.push_back(1);
      upstreams_.push_back(std::make_shared<const Upstream>(std::move(u)));
      ++changes.added;
      continue;
    }
    const auto i = static_cast<std::size_t>(at - upstreams_.begin());
    pool_.SetPriors(i, u.priors);  // no new loops or connections for that
    const bool back = pool_.removed(i);
    const bool changed = (*at)->kind != u.kind || (*at)->addresses != u.addresses;
    if (!back && !changed) {
      continue;  // as it was: its loops, connections and spelling stay
    }
    if (back) {  // added back: a clean health record
      pool_.SetRemoved(i, false, now);
      ++changes.added;
    } else {
      ++changes.changed;
    }
    kinds_[i] = u.kind;  // learned again at the next scrape when not given
    ++generations_[i];
    upstreams_[i] = std::make_shared<const Upstream>(std::move(u));
    changes.started.push_back({i, generations_[i]});
  }
  DispatchLocked(now);
  return changes;
}

void EndpointPool::Retire(Seconds now) {
  const std::lock_guard lock(mu_);
  retired_ = true;
  DispatchLocked(now);
}

void EndpointPool::RemoveAllIfRetiredLocked(Seconds now) {
  if (!retired_ || pool_.waiting() > 0) {
    return;
  }
  for (std::size_t i = 0; i < upstreams_.size(); ++i) {
    if (!pool_.removed(i)) {
      pool_.SetRemoved(i, true, now);
      ++generations_[i];
    }
  }
}

std::uint64_t EndpointPool::generation(std::size_t i) const {
  const std::lock_guard lock(mu_);
  return generations_[i];
}

bool EndpointPool::Watched(std::size_t i, std::uint64_t generation) const {
  const std::lock_guard lock(mu_);
  return generations_[i] == generation && !pool_.removed(i);
}

std::size_t EndpointPool::active() const {
  const std::lock_guard lock(mu_);
  std::size_t n = 0;
  for (std::size_t i = 0; i < pool_.size(); ++i) {
    n += pool_.removed(i) ? 0 : 1;
  }
  return n;
}

void EndpointPool::OnReceived(Seconds now) {
  const std::lock_guard lock(mu_);
  pool_.OnReceived(now);
}

routing::Pool::Placement EndpointPool::Admit(routing::Ticket ticket,
                                             const routing::RouteRequest& request, Seconds now,
                                             const std::shared_ptr<Waiter>& waiter) {
  const std::lock_guard lock(mu_);
  const routing::Pool::Placement p = pool_.Admit(ticket, request, now);
  if (p.kind == routing::Pool::Placement::Kind::kQueued) {
    SPILLWAY_CHECK(waiter != nullptr);
    waiters_[ticket] = waiter;
    DispatchLocked(now);
  }
  return p;
}

std::optional<routing::Pool::Placement> EndpointPool::Resolve(routing::Ticket ticket,
                                                              Waiter& waiter, bool client_gone,
                                                              Seconds now) {
  const std::lock_guard lock(mu_);
  if (!client_gone) {
    DispatchLocked(now);
  }
  if (waiter.placement.has_value()) {
    return waiter.placement;
  }
  waiters_.erase(ticket);
  if (client_gone) {
    pool_.CancelWaiting(ticket);
    RemoveAllIfRetiredLocked(now);
    return std::nullopt;
  }
  std::optional<routing::Pool::Placement> expired = pool_.ExpireWaiting(ticket, now);
  RemoveAllIfRetiredLocked(now);
  return expired;  // woken without a placement: its wait ran out
}

std::size_t EndpointPool::waiting() const {
  const std::lock_guard lock(mu_);
  return pool_.waiting();
}

Seconds EndpointPool::prediction_margin_s() const {
  const std::lock_guard lock(mu_);
  return pool_.prediction_margin_s();
}

void EndpointPool::DispatchLocked(Seconds now) {
  while (pool_.waiting() > 0) {
    std::optional<routing::Pool::Placement> p = pool_.DispatchNext(now);
    if (!p.has_value()) {
      break;
    }
    WakeLocked(std::move(*p));
  }
  RemoveAllIfRetiredLocked(now);
}

void EndpointPool::WakeLocked(routing::Pool::Placement p) {
  const auto it = waiters_.find(p.ticket);
  if (it == waiters_.end()) {
    return;  // (not reached: every queued ticket has its waiter)
  }
  std::shared_ptr<Waiter> w = it->second;
  waiters_.erase(it);
  w->placement = std::move(p);
  boost::asio::post(w->timer.get_executor(), [w] { w->timer.cancel(); });
}

void EndpointPool::DrainWaiting(Seconds now) {
  const std::lock_guard lock(mu_);
  for (routing::Pool::Placement& p : pool_.DrainWaiting(now)) {
    WakeLocked(std::move(p));
  }
}

routing::Pool::Pick EndpointPool::Route(const routing::RouteRequest& request, Seconds now) {
  const std::lock_guard lock(mu_);
  return pool_.Route(request, now);
}

bool EndpointPool::MayRetry(routing::RouteRequest* request, std::int32_t endpoint,
                            std::int32_t attempts, Seconds now, routing::RetryDenial* why) {
  const std::lock_guard lock(mu_);
  return pool_.MayRetry(request, endpoint, attempts, now, why);
}

void EndpointPool::OnFirstToken(std::size_t i, std::int32_t prompt_tokens, Seconds ttft_s,
                                bool alone, Seconds predicted_ttft_s) {
  const std::lock_guard lock(mu_);
  pool_.OnFirstToken(i, prompt_tokens, ttft_s, alone, predicted_ttft_s);
}

void EndpointPool::OnFinish(std::size_t i, Seconds now, bool completed) {
  const std::lock_guard lock(mu_);
  pool_.OnFinish(i, now, completed);
  DispatchLocked(now);
}

void EndpointPool::OnProbe(std::size_t i, routing::ProbeResult result, Seconds now) {
  const std::lock_guard lock(mu_);
  pool_.OnProbe(i, result, now);
  DispatchLocked(now);
}

void EndpointPool::OnDraining(std::size_t i, Seconds now) {
  const std::lock_guard lock(mu_);
  pool_.OnDraining(i, now);
  DispatchLocked(now);
}

void EndpointPool::OnError(std::size_t i, Seconds now) {
  const std::lock_guard lock(mu_);
  pool_.OnError(i, now);
  DispatchLocked(now);
}

void EndpointPool::OnNotStarted(std::size_t i, const routing::RouteRequest& request) {
  const std::lock_guard lock(mu_);
  pool_.OnNotStarted(i, request);
}

void EndpointPool::OnSuccess(std::size_t i) {
  const std::lock_guard lock(mu_);
  pool_.OnSuccess(i);
}

void EndpointPool::OnEndpointRefused(const std::string& flow, bool for_load, Seconds now) {
  const std::lock_guard lock(mu_);
  pool_.OnEndpointRefused(flow, for_load, now);
}

Seconds EndpointPool::DrainTime(Seconds now) const {
  const std::lock_guard lock(mu_);
  return pool_.DrainTime(now);
}

bool EndpointPool::OnScrape(std::size_t i, const metrics::Exposition& exposition, Seconds now) {
  const std::lock_guard lock(mu_);
  if (!kinds_[i].has_value()) {
    kinds_[i] = routing::DetectEngineKind(exposition);
    if (!kinds_[i].has_value()) {
      return false;
    }
  }
  const std::optional<routing::EndpointLoad> load =
      routing::LoadFromMetrics(*kinds_[i], exposition);
  if (!load.has_value()) {
    return false;
  }
  pool_.OnScrape(i, *load, now);
  DispatchLocked(now);
  return true;
}

std::optional<routing::EngineKind> EndpointPool::Kind(std::size_t i) const {
  const std::lock_guard lock(mu_);
  return kinds_[i];
}

routing::EndpointState EndpointPool::Endpoint(std::size_t i) const {
  const std::lock_guard lock(mu_);
  return pool_.endpoint(i);
}

std::vector<EndpointView> EndpointPool::View(Seconds now) const {
  const std::lock_guard lock(mu_);
  std::vector<EndpointView> out;
  for (std::size_t i = 0; i < pool_.size(); ++i) {
    const routing::EndpointState& s = pool_.endpoint(i);
    if (pool_.removed(i) && s.in_flight() == 0) {
      continue;  // gone from the pool and from /metrics
    }
    EndpointView v;
    v.url = upstreams_[i]->url;
    v.health = pool_.HealthAt(i, now);
    v.metrics_age_s = s.MetricsAge(now);
    v.stale = pool_.Stale(i, now);
    v.in_flight = s.in_flight();
    v.load = s.load();
    out.push_back(v);
  }
  return out;
}

}  // namespace spillway::gateway
