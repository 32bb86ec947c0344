#pragma once
// A scenario's `fleet:` section: how many replicas run it, the router in front of them and its
// scrape settings, and the faults injected into endpoints during the run (the failure modes the
// gateway must survive). `spillway sim` reads it (its --replicas, --router, --scrape-interval-s,
// --staleness, --stale-after-s and --queue-max-wait-s flags win); the live failure suite injects
// the same faults.
//
//   fleet:
//     replicas: 3
//     router: gateway        # least-loaded, gateway, round-robin, least-requests, llm-d
//     scrape_interval_s: 0.25
//     staleness: fail-open   # or fail-close
//     stale_after_s: 1
//     queue_max_wait_s: 0.25 # the gateway router's wait queue (0: refuse at once)
//     faults:
//       - {fault: kill, endpoint: 1, at_s: 45}            # SIGKILL: in-flight requests fail
//       - {fault: drain, endpoint: 2, at_s: 60}           # SIGTERM: in-flight ones finish
//       - {fault: stale_metrics, endpoint: 0, at_s: 40, until_s: 50}  # /metrics not answered
//       - {fault: slow, endpoint: 0, at_s: 40, until_s: 50, factor: 2} # steps take 2x as long

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/yaml_reader.h"
#include "core/types.h"

namespace spillway {

struct FleetFault {
  enum class Kind : std::uint8_t { kKill, kDrain, kStaleMetrics, kSlow };
  Kind kind = Kind::kKill;
  std::int32_t endpoint = 0;  ///< replica index, from 0
  Seconds at_s = 0;
  Seconds until_s = kNever;  ///< stale_metrics and slow: the end of the window
  double factor = 1;         ///< slow: step durations are multiplied by this
  /// Whether a windowed fault (stale_metrics, slow) is in force at `t`.
  bool ActiveAt(Seconds t) const { return t >= at_s && t < until_s; }
};

struct Fleet {
  std::int32_t replicas = 0;  ///< 0: not given
  std::string router;         ///< empty: not given
  std::optional<Seconds> scrape_interval_s;
  std::string staleness;  ///< empty: not given
  std::optional<Seconds> stale_after_s;
  std::optional<Seconds> queue_max_wait_s;
  std::vector<FleetFault> faults;
};

/// The router names a fleet may give (routing::ParseRouterPolicy's, plus the simulator's
/// least-loaded oracle).
const std::vector<std::string>& FleetRouterNames();

/// Parses a `fleet:` section (absent: an empty Fleet). Throws config::ConfigError naming the
/// file, line, field and value: unknown keys, an endpoint outside [0, replicas) when replicas
/// is given, at_s < 0, until_s <= at_s, a windowed fault without until_s, factor outside
/// [1, 100].
Fleet ParseFleet(const config::Field& f);

}  // namespace spillway
