#include "gateway/endpoint_pool.h"

#include <boost/asio/post.hpp>

#include "core/check.h"

namespace spillway::gateway {
namespace {

std::vector<routing::EndpointState> StatesOf(const std::vector<Upstream>& upstreams) {
  std::vector<routing::EndpointState> states;
  for (const Upstream& u : upstreams) {
    const bool exports = !u.kind.has_value() || routing::ExportsMetrics(*u.kind);
    states.emplace_back(u.url, exports, routing::EndpointPriors{});
  }
  return states;
}

}  // namespace

EndpointPool::EndpointPool(std::string model, std::vector<Upstream> upstreams,
                           const GatewayConfig& config)
    : model_(std::move(model)),
      upstreams_(std::move(upstreams)),
      pool_(StatesOf(upstreams_), config.PoolSettings()) {
  for (const Upstream& u : upstreams_) {
    kinds_.push_back(u.kind);
  }
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
    return std::nullopt;
  }
  return pool_.ExpireWaiting(ticket, now);  // woken without a placement: its wait ran out
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
      return;
    }
    WakeLocked(std::move(*p));
  }
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

void EndpointPool::OnSuccess(std::size_t i) {
  const std::lock_guard lock(mu_);
  pool_.OnSuccess(i);
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

std::vector<EndpointView> EndpointPool::View(Seconds now) const {
  const std::lock_guard lock(mu_);
  std::vector<EndpointView> out;
  for (std::size_t i = 0; i < pool_.size(); ++i) {
    const routing::EndpointState& s = pool_.endpoint(i);
    EndpointView v;
    v.url = upstreams_[i].url;
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
