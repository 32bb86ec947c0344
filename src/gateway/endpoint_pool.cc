#include "gateway/endpoint_pool.h"

#include <algorithm>
#include <cmath>

namespace spillway::gateway {
namespace {

routing::HealthConfig HealthOf(const GatewayConfig& c) {
  routing::HealthConfig h;
  h.eject_after_errors = c.eject_after_errors;
  h.eject_base_s = c.eject_base_s;
  h.max_ejected_fraction = c.max_ejected_fraction;
  return h;
}

}  // namespace

EndpointPool::EndpointPool(std::string model, std::vector<Upstream> upstreams,
                           const GatewayConfig& config)
    : model_(std::move(model)),
      upstreams_(std::move(upstreams)),
      router_(config.router),
      health_(upstreams_.size(), HealthOf(config)) {
  for (const Upstream& u : upstreams_) {
    const bool exports = !u.kind.has_value() || routing::ExportsMetrics(*u.kind);
    states_.emplace_back(u.url, exports, routing::EndpointPriors{});
    kinds_.push_back(u.kind);
  }
}

EndpointPool::Pick EndpointPool::Route(const routing::RouteRequest& request, Seconds now) {
  const std::lock_guard lock(mu_);
  for (std::size_t i = 0; i < states_.size(); ++i) {
    RefreshHealth(i, now);  // ejections end with time
  }
  Pick pick;
  pick.decision = router_.Route(request, states_, now);
  if (pick.decision.forwarded()) {
    routing::EndpointState& s = states_[static_cast<std::size_t>(pick.decision.endpoint)];
    pick.alone = s.QueueAhead(router_.Fresh(s, now)) <= 0 && s.in_flight() == 0;
    s.OnForward(now);
  }
  return pick;
}

bool EndpointPool::AnyEligible(const std::vector<std::int32_t>& exclude, Seconds now) const {
  const std::lock_guard lock(mu_);
  for (std::size_t i = 0; i < states_.size(); ++i) {
    const bool excluded =
        std::find(exclude.begin(), exclude.end(), static_cast<std::int32_t>(i)) != exclude.end();
    if (!excluded && health_.HealthAt(i, now) == routing::EndpointHealth::kHealthy) {
      return true;
    }
  }
  return false;
}

void EndpointPool::OnFirstToken(std::size_t i, std::int32_t prompt_tokens, Seconds ttft_s,
                                bool alone) {
  const std::lock_guard lock(mu_);
  states_[i].OnFirstToken(prompt_tokens, ttft_s, alone);
}

void EndpointPool::OnFinish(std::size_t i, Seconds now, bool completed) {
  const std::lock_guard lock(mu_);
  states_[i].OnFinish(now, completed);
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
  states_[i].OnScrape(*load, now);
  return true;
}

std::optional<routing::EngineKind> EndpointPool::Kind(std::size_t i) const {
  const std::lock_guard lock(mu_);
  return kinds_[i];
}

void EndpointPool::OnProbe(std::size_t i, routing::ProbeResult result, Seconds now) {
  const std::lock_guard lock(mu_);
  health_.OnProbe(i, result);
  RefreshHealth(i, now);
}

void EndpointPool::OnDraining(std::size_t i, Seconds now) {
  const std::lock_guard lock(mu_);
  health_.OnDraining(i);
  RefreshHealth(i, now);
}

void EndpointPool::OnError(std::size_t i, Seconds now) {
  const std::lock_guard lock(mu_);
  health_.OnError(i, now);
  RefreshHealth(i, now);
}

void EndpointPool::OnSuccess(std::size_t i) {
  const std::lock_guard lock(mu_);
  health_.OnSuccess(i);
}

std::vector<EndpointView> EndpointPool::View(Seconds now) const {
  const std::lock_guard lock(mu_);
  std::vector<EndpointView> out;
  for (std::size_t i = 0; i < states_.size(); ++i) {
    const routing::EndpointState& s = states_[i];
    EndpointView v;
    v.url = upstreams_[i].url;
    v.health = health_.HealthAt(i, now);
    v.metrics_age_s = s.MetricsAge(now);
    v.stale = s.exports_metrics() && !router_.Fresh(s, now);
    v.in_flight = s.in_flight();
    v.load = s.load();
    v.ejections = health_.ejections(i);
    out.push_back(v);
  }
  return out;
}

Seconds EndpointPool::DrainTime(Seconds now) const {
  const std::lock_guard lock(mu_);
  return router_.DrainTime(states_, now);
}

void EndpointPool::RefreshHealth(std::size_t i, Seconds now) {
  states_[i].set_health(health_.HealthAt(i, now));
}

}  // namespace spillway::gateway
