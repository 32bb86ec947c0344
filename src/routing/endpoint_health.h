#pragma once
// Which endpoints of a pool take new work, from what the gateway sees of them: active probes
// of /ready and passive outlier detection on the replies it relays (after Envoy's outlier
// detection: consecutive errors eject an endpoint for a base time that doubles with each
// ejection, and at most a fraction of the pool is ejected at once, though always at least one
// may be).
//
//   probe /ready 200            -> healthy (unless ejected)
//   probe /ready 503, or a reply 503 draining -> draining (in-flight requests finish)
//   probe: connection refused or timed out    -> down
//   eject_after_errors consecutive connect errors or upstream failures -> ejected until
//   now + eject_base_s * 2^(ejections - 1) (at most 300 s)
//
// A refusal (429, or a 503 of the overload contract other than draining) is the endpoint
// working as designed: it resets the error count, as a success does. An endpoint removed from
// the pool (a config reload) drains for good: no probe makes it take work again until it is
// added back. Pure: `now` is passed in.
// Not thread-safe.

#include <cstdint>
#include <vector>

#include "core/types.h"
#include "routing/endpoint_state.h"

namespace spillway::routing {

struct HealthConfig {
  std::int32_t eject_after_errors = 3;
  Seconds eject_base_s = 1;
  Seconds eject_max_s = 300;
  double max_ejected_fraction = 0.5;
};

enum class ProbeResult : std::uint8_t { kReady, kNotReady, kUnreachable };

/// What a health probe's HTTP status says (0: no answer), as Envoy's active health check by
/// default: 2xx ready; any other status not ready (503 draining or loading; vLLM answers
/// /health with 500 or 503 once its engine died; a 404 says the endpoint's URL or base path is
/// wrong, and routing there would only relay 404s); no answer unreachable.
ProbeResult ProbeResultOf(int http_status);

class PoolHealth {
 public:
  PoolHealth(std::size_t endpoints, HealthConfig config);

  void OnProbe(std::size_t endpoint, ProbeResult result);
  /// A reply that says the endpoint drains (503 draining): no new work until a probe says ready.
  void OnDraining(std::size_t endpoint);
  /// A connect error, reset, or a reply that is neither an answer nor a refusal (5xx).
  void OnError(std::size_t endpoint, Seconds now);
  /// A reply that worked (an answer or a refusal of the contract).
  void OnSuccess(std::size_t endpoint);

  /// The endpoint's health at `now` (an ejection ends when its time has passed).
  EndpointHealth HealthAt(std::size_t endpoint, Seconds now) const;
  /// One more endpoint, healthy until a probe or a reply says otherwise; returns its index.
  std::size_t AddEndpoint();
  /// The endpoint leaves the pool (no new work; its in-flight requests finish): draining for
  /// good, or, `removed` false, back in the pool with a clean record.
  void SetRemoved(std::size_t endpoint, bool removed);
  bool removed(std::size_t endpoint) const { return state_[endpoint].removed; }
  /// New thresholds for every endpoint; their records stay.
  void set_config(const HealthConfig& config) { config_ = config; }

  /// Times the endpoint was ejected so far.
  std::int32_t ejections(std::size_t endpoint) const { return state_[endpoint].ejections; }

 private:
  struct State {
    ProbeResult probe = ProbeResult::kReady;  // optimistic until the first probe
    bool draining = false;                    // said by a reply, cleared by a ready probe
    bool removed = false;                     // out of the pool (a reload): drains for good
    std::int32_t consecutive_errors = 0;
    std::int32_t ejections = 0;
    Seconds ejected_until_s = -kNever;
  };
  std::int32_t EjectedAt(Seconds now) const;

  HealthConfig config_;
  std::vector<State> state_;
};

}  // namespace spillway::routing
