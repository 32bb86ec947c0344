#include "sim/capacity.h"

#include "config/yaml_reader.h"
#include "sim/simulator.h"

namespace spillway {
namespace {

CapacityProbe Probe(const Scenario& base, const RunConfig& config, double rate,
                    const CapacityOptions& o) {
  Scenario sc = base;
  sc.arrival = ArrivalProcess{};
  sc.arrival.kind = ArrivalProcess::Kind::kPoisson;
  sc.arrival.rate_rps = rate;
  sc.arrival.duration_s = o.probe_s;
  sc.client = ClientBehaviour{};
  RunConfig rc = config;
  rc.admission.policy = AdmissionPolicy::kUnbounded;
  SimOptions opt;
  opt.seed = o.seed;
  opt.check_invariants = false;
  const RunSummary s = Simulate(sc, rc, opt);
  CapacityProbe p;
  p.rate_rps = rate;
  // Steady state: the summary's percentiles cover the whole probe; a short warm-up barely
  // moves a p95 over 300 s, and an overloaded probe grows without bound either way.
  p.ttft_p95_s = s.ttft_s.p95;
  p.tpot_p95_s = s.tpot_s.p95;
  p.within_slo = p.ttft_p95_s <= *base.slo.ttft_s && p.tpot_p95_s <= *base.slo.tpot_s;
  return p;
}

}  // namespace

CapacityResult MeasureCapacity(const Scenario& scenario, const RunConfig& config,
                               const CapacityOptions& options) {
  if (!scenario.slo.ttft_s || !scenario.slo.tpot_s) {
    throw config::ConfigError(scenario.file +
                              ": slo: --measure-capacity needs slo.ttft_s and slo.tpot_s");
  }
  if (scenario.classes.empty()) {
    throw config::ConfigError(scenario.file + ": classes: --measure-capacity needs classes");
  }
  CapacityResult result;
  double lo = options.lo_rps;
  double hi = options.hi_rps;
  CapacityProbe first = Probe(scenario, config, lo, options);
  result.probes.push_back(first);
  if (!first.within_slo) {
    return result;
  }
  while (hi - lo > options.tolerance_rps) {
    const double mid = (lo + hi) / 2;
    const CapacityProbe p = Probe(scenario, config, mid, options);
    result.probes.push_back(p);
    (p.within_slo ? lo : hi) = mid;
  }
  result.mu_rps = lo;
  return result;
}

}  // namespace spillway
