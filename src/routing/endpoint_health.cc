#include "routing/endpoint_health.h"

#include <algorithm>
#include <cmath>

namespace spillway::routing {

PoolHealth::PoolHealth(std::size_t endpoints, HealthConfig config)
    : config_(config), state_(endpoints) {}

void PoolHealth::OnProbe(std::size_t endpoint, ProbeResult result) {
  State& s = state_[endpoint];
  s.probe = result;
  if (result == ProbeResult::kReady) {
    s.draining = false;
  }
}

std::size_t PoolHealth::AddEndpoint() {
  state_.emplace_back();
  return state_.size() - 1;
}

void PoolHealth::SetRemoved(std::size_t endpoint, bool removed) {
  state_[endpoint] = State{};
  state_[endpoint].removed = removed;
}

void PoolHealth::OnDraining(std::size_t endpoint) { state_[endpoint].draining = true; }

void PoolHealth::OnSuccess(std::size_t endpoint) { state_[endpoint].consecutive_errors = 0; }

void PoolHealth::OnError(std::size_t endpoint, Seconds now) {
  State& s = state_[endpoint];
  if (now < s.ejected_until_s) {
    return;  // already out: errors of requests sent before the ejection
  }
  if (++s.consecutive_errors < config_.eject_after_errors) {
    return;
  }
  const double allowed =
      std::floor(config_.max_ejected_fraction * static_cast<double>(state_.size()));
  if (EjectedAt(now) >= std::max(1.0, allowed)) {
    return;  // too much of the pool is out already: keep routing to it
  }
  ++s.ejections;
  s.consecutive_errors = 0;
  const double factor = std::pow(2.0, std::min(s.ejections - 1, 30));
  s.ejected_until_s = now + std::min(config_.eject_base_s * factor, config_.eject_max_s);
}

EndpointHealth PoolHealth::HealthAt(std::size_t endpoint, Seconds now) const {
  const State& s = state_[endpoint];
  if (s.removed) {
    return EndpointHealth::kDraining;
  }
  if (s.probe == ProbeResult::kUnreachable) {
    return EndpointHealth::kDown;
  }
  if (now < s.ejected_until_s) {
    return EndpointHealth::kEjected;
  }
  if (s.draining || s.probe == ProbeResult::kNotReady) {
    return EndpointHealth::kDraining;
  }
  return EndpointHealth::kHealthy;
}

std::int32_t PoolHealth::EjectedAt(Seconds now) const {
  return static_cast<std::int32_t>(std::count_if(
      state_.begin(), state_.end(), [now](const State& s) { return now < s.ejected_until_s; }));
}

ProbeResult ProbeResultOf(int http_status) {
  if (http_status == 0) {
    return ProbeResult::kUnreachable;
  }
  return http_status / 100 == 2 ? ProbeResult::kReady : ProbeResult::kNotReady;
}

}  // namespace spillway::routing
