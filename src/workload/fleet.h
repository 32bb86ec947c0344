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
//
// Or several pools, one model each (the model cascade, routing/cascade.h), instead of
// `replicas`: every request asks for the first pool's model; its `fallbacks` take what it
// refuses for load. Replicas are numbered across the pools in order (faults name them so).
//
//     pools:
//       - {model: llama-2-7b, replicas: 1, fallbacks: [llama-3.2-1b]}  # the scenario's engine
//       - {model: llama-3.2-1b, replicas: 1, profile: a100-llama3.2-1b}
//     cascade_order: [primary, clamp, fallback, reject]  # the gateway's cascade.order (a
//                                                        # cache step: live only)
//
// A pool's `degrade_max_tokens` (0: off) and `degrade_ttft_fraction` (0.5) are its max_tokens
// clamp in the cascade's clamp step, as the gateway config's; `cache: {max_entries, ttl_s}`
// the gateway's exact-result cache (classes with distinct_prompts ask prompts again).

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

/// One pool of a fleet: `replicas` engines of one model. `profile`: the executor profile they
/// run (empty: the scenario's engine.profile); `fallbacks`: the models of later pools that take
/// what this pool refuses for load, in order.
struct FleetPool {
  std::string model;
  std::int32_t replicas = 1;
  std::string profile;
  std::vector<std::string> fallbacks;
  std::int32_t degrade_max_tokens = 0;
  double degrade_ttft_fraction = 0.5;
};

struct Fleet {
  std::int32_t replicas = 0;  ///< 0: not given; with `pools`, the sum of theirs
  std::string router;         ///< empty: not given
  std::optional<Seconds> scrape_interval_s;
  std::string staleness;  ///< empty: not given
  std::optional<Seconds> stale_after_s;
  std::optional<Seconds> queue_max_wait_s;
  std::vector<FleetFault> faults;
  std::vector<FleetPool> pools;  ///< empty: one pool of `replicas` running the scenario's engine
  /// The cascade's steps by name (routing::ParseCascadeStep's); empty: the default order.
  std::vector<std::string> cascade_order;
  /// The gateway's exact-result cache, `cache: {max_entries, ttl_s}` (0 entries: off).
  std::int64_t cache_max_entries = 0;
  std::optional<Seconds> cache_ttl_s;
};

/// The router names a fleet may give (routing::ParseRouterPolicy's, plus the simulator's
/// least-loaded oracle).
const std::vector<std::string>& FleetRouterNames();

/// Parses a `fleet:` section (absent: an empty Fleet). Throws config::ConfigError naming the
/// file, line, field and value: unknown keys, an endpoint outside [0, replicas) when replicas
/// is given, at_s < 0, until_s <= at_s, a windowed fault without until_s, factor outside
/// [1, 100]; `replicas` beside `pools`, a pool's model empty or twice, a fallback that is not
/// the model of another pool or named twice; a cascade_order that is not an order (primary
/// named, each step once, clamp and fallback after primary, reject last).
Fleet ParseFleet(const config::Field& f);

}  // namespace spillway
