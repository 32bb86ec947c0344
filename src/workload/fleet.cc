#include "workload/fleet.h"

#include <algorithm>

#include "workload/field_checks.h"

namespace spillway {

using namespace field_checks;  // NOLINT(google-build-using-namespace): the loader's readers

const std::vector<std::string>& FleetRouterNames() {
  static const std::vector<std::string> kNames = {"least-loaded", "gateway", "round-robin",
                                                  "least-requests", "llm-d"};
  return kNames;
}

namespace {

FleetFault ParseFault(const config::Field& f, std::int32_t replicas) {
  f.RequireKnownKeys({"fault", "endpoint", "at_s", "until_s", "factor"});
  FleetFault fault;
  const std::string kind = EnumOf(Required(f, "fault"), {"kill", "drain", "stale_metrics", "slow"});
  fault.kind = kind == "kill"            ? FleetFault::Kind::kKill
               : kind == "drain"         ? FleetFault::Kind::kDrain
               : kind == "stale_metrics" ? FleetFault::Kind::kStaleMetrics
                                         : FleetFault::Kind::kSlow;
  const config::Field endpoint = Required(f, "endpoint");
  fault.endpoint =
      static_cast<std::int32_t>(IntIn(endpoint, 0, replicas > 0 ? replicas - 1 : 1023));
  fault.at_s = RequiredNonNegative(f, "at_s");
  const bool windowed =
      fault.kind == FleetFault::Kind::kStaleMetrics || fault.kind == FleetFault::Kind::kSlow;
  if (windowed) {
    const config::Field until = Required(f, "until_s");
    fault.until_s = RequiredPositive(f, "until_s");
    if (fault.until_s <= fault.at_s) {
      until.Fail("must be after at_s");
    }
  } else if (f["until_s"].present()) {
    f["until_s"].Fail("applies to stale_metrics and slow only");
  }
  if (fault.kind == FleetFault::Kind::kSlow) {
    const config::Field factor = Required(f, "factor");
    fault.factor = config::InRange(factor, factor.AsDouble(), 1 - 1e-12, 100);
  } else if (f["factor"].present()) {
    f["factor"].Fail("applies to slow only");
  }
  return fault;
}

std::vector<FleetPool> ParsePools(const config::Field& f) {
  std::vector<FleetPool> pools;
  for (const config::Field& p : f.Items()) {
    p.RequireKnownKeys({"model", "replicas", "profile", "fallbacks", "degrade_max_tokens",
                        "degrade_ttft_fraction"});
    FleetPool pool;
    pool.model = Required(p, "model").AsString();
    for (const FleetPool& before : pools) {
      if (before.model == pool.model || pool.model.empty()) {
        p["model"].Fail("must be a model name no other pool has");
      }
    }
    pool.replicas = static_cast<std::int32_t>(OptIntIn(p["replicas"], 1, 1024).value_or(1));
    if (const config::Field profile = p["profile"]; profile.present()) {
      pool.profile = profile.AsString();
    }
    if (const config::Field fallbacks = p["fallbacks"]; fallbacks.present()) {
      for (const config::Field& m : fallbacks.Items()) {
        pool.fallbacks.push_back(m.AsString());
      }
    }
    pool.degrade_max_tokens =
        static_cast<std::int32_t>(OptIntIn(p["degrade_max_tokens"], 0, 1 << 24).value_or(0));
    if (const config::Field frac = p["degrade_ttft_fraction"]; frac.present()) {
      pool.degrade_ttft_fraction = frac.AsDouble();
      if (!(pool.degrade_ttft_fraction > 0 && pool.degrade_ttft_fraction <= 1)) {
        frac.Fail("must be in (0, 1] (a fraction of the TTFT SLO)");
      }
    }
    pools.push_back(std::move(pool));
  }
  if (pools.empty()) {
    f.Fail("must list at least one pool");
  }
  // Fallbacks name other pools, once each (checked once every pool is known).
  std::size_t i = 0;
  for (const config::Field& p : f.Items()) {
    const FleetPool& pool = pools[i++];
    std::vector<std::string> seen;
    for (const std::string& m : pool.fallbacks) {
      const bool known = std::any_of(pools.begin(), pools.end(), [&](const FleetPool& o) {
        return o.model == m && o.model != pool.model;
      });
      if (!known || std::find(seen.begin(), seen.end(), m) != seen.end()) {
        p["fallbacks"].Fail("must name the models of other pools, each once; got '" + m + "'");
      }
      seen.push_back(m);
    }
  }
  return pools;
}

}  // namespace

Fleet ParseFleet(const config::Field& f) {
  Fleet fleet;
  if (!f.present()) {
    return fleet;
  }
  f.RequireKnownKeys({"replicas", "router", "scrape_interval_s", "staleness", "stale_after_s",
                      "queue_max_wait_s", "faults", "pools", "cascade_order", "cache"});
  fleet.replicas = static_cast<std::int32_t>(OptIntIn(f["replicas"], 1, 1024).value_or(0));
  if (const config::Field pools = f["pools"]; pools.present()) {
    if (fleet.replicas > 0) {
      f["replicas"].Fail("is given per pool when the fleet has pools");
    }
    fleet.pools = ParsePools(pools);
    for (const FleetPool& p : fleet.pools) {
      fleet.replicas += p.replicas;
    }
  }
  if (f["router"].present()) {
    fleet.router = EnumOf(f["router"], FleetRouterNames());
  }
  if (const config::Field cache = f["cache"]; cache.present()) {
    cache.RequireKnownKeys({"max_entries", "ttl_s"});
    fleet.cache_max_entries = OptIntIn(cache["max_entries"], 0, std::int64_t{1} << 32).value_or(0);
    fleet.cache_ttl_s = OptPositive(cache["ttl_s"]);
  }
  if (const config::Field order = f["cascade_order"]; order.present()) {
    if (!order.is_sequence()) {
      order.Fail("must be a list of steps: primary, clamp, fallback, reject");
    }
    for (const config::Field& step : order.Items()) {
      fleet.cascade_order.push_back(
          EnumOf(step, {"cache", "primary", "clamp", "fallback", "reject"}));
    }
    // routing::CascadeOrderError's rules (the workload does not depend on routing).
    const std::vector<std::string>& o = fleet.cascade_order;
    const auto primary = std::find(o.begin(), o.end(), "primary");
    for (std::size_t i = 0; i < o.size(); ++i) {
      if (primary == o.end() || std::find(o.begin(), primary, "clamp") != primary ||
          std::find(o.begin(), primary, "fallback") != primary ||
          std::count(o.begin(), o.end(), o[i]) > 1 || (o[i] == "reject" && i + 1 != o.size())) {
        order.Fail(
            "must name primary, each step once, clamp and fallback after primary and reject last");
      }
    }
  }
  fleet.scrape_interval_s = OptPositive(f["scrape_interval_s"]);
  if (f["staleness"].present()) {
    fleet.staleness = EnumOf(f["staleness"], {"fail-open", "fail-close"});
  }
  fleet.stale_after_s = OptPositive(f["stale_after_s"]);
  fleet.queue_max_wait_s = OptNonNegative(f["queue_max_wait_s"]);
  if (fleet.queue_max_wait_s.has_value() && *fleet.queue_max_wait_s > 3600) {
    f["queue_max_wait_s"].Fail("must be in [0, 3600] (seconds)");
  }
  if (const config::Field faults = f["faults"]; faults.present()) {
    for (const config::Field& fault : faults.Items()) {
      fleet.faults.push_back(ParseFault(fault, fleet.replicas));
    }
  }
  return fleet;
}

}  // namespace spillway
