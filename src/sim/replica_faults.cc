#include "sim/replica_faults.h"

#include <string>

#include "config/config_error.h"

namespace spillway {

ReplicaFaults::ReplicaFaults(std::vector<FleetFault> faults, std::int32_t replicas)
    : faults_(std::move(faults)), life_(static_cast<std::size_t>(replicas), Life::kUp) {
  for (const FleetFault& f : faults_) {
    if (f.endpoint >= replicas) {
      throw config::ConfigError("fleet.faults: endpoint " + std::to_string(f.endpoint) +
                                " does not exist: the run has " + std::to_string(replicas) +
                                " replicas (0 to " + std::to_string(replicas - 1) + ")");
    }
  }
}

bool ReplicaFaults::AnswersMetrics(std::size_t replica, Seconds t) const {
  if (life_[replica] == Life::kDead) {
    return false;
  }
  for (const FleetFault& f : faults_) {
    if (f.kind == FleetFault::Kind::kStaleMetrics &&
        static_cast<std::size_t>(f.endpoint) == replica && f.ActiveAt(t)) {
      return false;
    }
  }
  return true;
}

double ReplicaFaults::SlowFactor(std::size_t replica, Seconds t) const {
  double factor = 1;
  for (const FleetFault& f : faults_) {
    if (f.kind == FleetFault::Kind::kSlow && static_cast<std::size_t>(f.endpoint) == replica &&
        f.ActiveAt(t)) {
      factor *= f.factor;
    }
  }
  return factor;
}

routing::ProbeResult ReplicaFaults::Probe(std::size_t replica) const {
  switch (life_[replica]) {
    case Life::kUp:
      return routing::ProbeResult::kReady;
    case Life::kDraining:
      return routing::ProbeResult::kNotReady;
    case Life::kDead:
      return routing::ProbeResult::kUnreachable;
  }
  return routing::ProbeResult::kUnreachable;
}

}  // namespace spillway
