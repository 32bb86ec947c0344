#include "workload/fleet.h"

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

}  // namespace

Fleet ParseFleet(const config::Field& f) {
  Fleet fleet;
  if (!f.present()) {
    return fleet;
  }
  f.RequireKnownKeys({"replicas", "router", "scrape_interval_s", "staleness", "stale_after_s",
                      "queue_max_wait_s", "faults"});
  fleet.replicas = static_cast<std::int32_t>(OptIntIn(f["replicas"], 1, 1024).value_or(0));
  if (f["router"].present()) {
    fleet.router = EnumOf(f["router"], FleetRouterNames());
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
