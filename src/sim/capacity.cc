#include "sim/capacity.h"

#include <algorithm>

#include "config/config_error.h"
#include "sim/simulator.h"
#include "workload/arrivals.h"

namespace spillway {
namespace {

// The scenario's arrivals reshaped to a mean rate of `rate` for one probe.
Scenario ProbeScenario(const Scenario& base, double rate, double trace_rate,
                       const CapacityOptions& o) {
  Scenario sc = base;
  sc.client = ClientBehaviour{};
  if (base.arrival.kind == ArrivalProcess::Kind::kTrace) {
    // Stretch or compress the trace's clock; the window is in scaled time, so it scales too.
    const double factor = trace_rate / rate;
    sc.arrival.time_scale *= factor;
    sc.arrival.trace_start_s *= factor;
    sc.arrival.duration_s *= factor;
    return sc;
  }
  sc.arrival = ArrivalProcess{};
  sc.arrival.kind = ArrivalProcess::Kind::kPoisson;
  sc.arrival.rate_rps = rate;
  sc.arrival.duration_s = o.probe_s;
  return sc;
}

CapacityProbe Probe(const Scenario& base, const RunConfig& config, double rate, double trace_rate,
                    const CapacityOptions& o) {
  const Scenario sc = ProbeScenario(base, rate, trace_rate, o);
  RunConfig rc = config;
  rc.admission.policy = AdmissionPolicy::kUnbounded;
  SimOptions opt;
  opt.seed = o.seed;
  opt.invariant_checks = InvariantChecks::kOff;
  return JudgeCapacityRun(Simulate(sc, rc, opt), base, rate);
}

double TraceRate(const Scenario& sc, std::uint64_t seed) {
  const std::vector<Arrival> arrivals = GenerateArrivals(sc, seed);
  const Seconds span = sc.ArrivalSpan();
  if (arrivals.empty() || span <= 0) {
    throw config::ConfigError(sc.file + ": arrival: the trace window holds no requests");
  }
  return static_cast<double>(arrivals.size()) / span;
}

}  // namespace

CapacityProbe JudgeCapacityRun(const RunSummary& run, const Scenario& scenario, double rate_rps) {
  CapacityProbe p;
  p.rate_rps = rate_rps;
  p.completed_fraction = run.offered > 0 ? static_cast<double>(run.completed) / run.offered : 0;
  p.ttft_p95_s = run.ttft_s.p95;
  p.tpot_p95_s = run.tpot_s.p95;
  p.within_slo = p.completed_fraction >= 0.95 && run.ttft_s.count > 0 &&
                 p.ttft_p95_s <= *scenario.slo.ttft_s && p.tpot_p95_s <= *scenario.slo.tpot_s;
  return p;
}

Scenario CapacityProbeScenario(const Scenario& scenario, double rate_rps, Seconds duration_s,
                               std::uint64_t seed) {
  const bool trace = scenario.arrival.kind == ArrivalProcess::Kind::kTrace;
  CapacityOptions o;
  o.probe_s = duration_s;
  o.seed = seed;
  Scenario sc = ProbeScenario(scenario, rate_rps, trace ? TraceRate(scenario, seed) : 0, o);
  if (trace) {
    // 0: the whole trace.
    sc.arrival.duration_s =
        sc.arrival.duration_s > 0 ? std::min(sc.arrival.duration_s, duration_s) : duration_s;
  }
  return sc;
}

CapacityResult MeasureCapacity(const Scenario& scenario, const RunConfig& config,
                               const CapacityOptions& options) {
  if (!scenario.slo.ttft_s || !scenario.slo.tpot_s) {
    throw config::ConfigError(scenario.file +
                              ": slo: --measure-capacity needs slo.ttft_s and slo.tpot_s");
  }
  const bool trace = scenario.arrival.kind == ArrivalProcess::Kind::kTrace;
  if (!trace && scenario.classes.empty()) {
    throw config::ConfigError(scenario.file + ": classes: --measure-capacity needs classes");
  }
  const double trace_rate = trace ? TraceRate(scenario, options.seed) : 0;
  CapacityResult result;
  double lo = options.lo_rps;
  double hi = options.hi_rps;
  const CapacityProbe first = Probe(scenario, config, lo, trace_rate, options);
  result.probes.push_back(first);
  if (!first.within_slo) {
    return result;
  }
  const CapacityProbe top = Probe(scenario, config, hi, trace_rate, options);
  result.probes.push_back(top);
  if (top.within_slo) {
    result.mu_rps = hi;
    result.at_search_ceiling = true;
    return result;
  }
  while (hi - lo > options.tolerance_rps) {
    const double mid = (lo + hi) / 2;
    const CapacityProbe p = Probe(scenario, config, mid, trace_rate, options);
    result.probes.push_back(p);
    (p.within_slo ? lo : hi) = mid;
  }
  result.mu_rps = lo;
  return result;
}

}  // namespace spillway
