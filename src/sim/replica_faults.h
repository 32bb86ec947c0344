#pragma once
// The fleet's endpoint faults (workload/fleet.h) as the simulator applies them to its replicas:
// each replica's life (up; draining after SIGTERM, its in-flight requests finishing, new ones
// refused 503 draining; dead after SIGKILL or once drained), whether its /metrics answers at a
// moment, and how much slower its steps run. Pure.

#include <cstdint>
#include <vector>

#include "routing/endpoint_health.h"
#include "workload/fleet.h"

namespace spillway {

class ReplicaFaults {
 public:
  enum class Life : std::uint8_t { kUp, kDraining, kDead };

  /// Throws config::ConfigError when a fault names a replica that does not exist.
  ReplicaFaults(std::vector<FleetFault> faults, std::int32_t replicas);

  const std::vector<FleetFault>& faults() const { return faults_; }
  Life life(std::size_t replica) const { return life_[replica]; }
  void set_life(std::size_t replica, Life life) { life_[replica] = life; }
  bool up(std::size_t replica) const { return life_[replica] == Life::kUp; }

  /// Whether the replica's /metrics answers at `t` (alive and outside a stale_metrics window).
  bool AnswersMetrics(std::size_t replica, Seconds t) const;
  /// The product of the slow factors in force at `t` (1 without one).
  double SlowFactor(std::size_t replica, Seconds t) const;
  /// What a health probe of the replica finds: ready, not ready (draining) or unreachable.
  routing::ProbeResult Probe(std::size_t replica) const;

 private:
  std::vector<FleetFault> faults_;
  std::vector<Life> life_;
};

}  // namespace spillway
