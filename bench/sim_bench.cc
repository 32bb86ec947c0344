// Simulator speed: simulated requests of the reference mix per wall second. Target: one
// million requests in under 30 s on a 2-core machine (> 33,000 requests/s).

#include <benchmark/benchmark.h>

#include <string>

#include "sim/run_config.h"
#include "sim/simulator.h"
#include "workload/scenario.h"

namespace spillway {
namespace {

void BM_SimulateReferenceMix(benchmark::State& state) {
  Scenario sc = LoadScenario(std::string(SPILLWAY_SOURCE_DIR) + "/scenarios/seed-burst.yaml");
  const auto requests = static_cast<double>(state.range(0));
  sc.arrival = ArrivalProcess{};
  sc.arrival.kind = ArrivalProcess::Kind::kPoisson;
  sc.arrival.rate_rps = 10.0;  // the reference engine's sustainable rate
  sc.arrival.duration_s = requests / sc.arrival.rate_rps;
  const RunConfig rc = ResolveRunConfig(sc, AdmissionPolicy::kPredictive,
                                        std::string(SPILLWAY_SOURCE_DIR) + "/profiles");
  SimOptions opt;
  opt.invariant_checks = InvariantChecks::kOff;
  std::int64_t simulated = 0;
  for (auto _ : state) {
    const RunSummary s = Simulate(sc, rc, opt);
    simulated += s.offered;
    benchmark::DoNotOptimize(s.good);
  }
  state.counters["requests_per_s"] =
      benchmark::Counter(static_cast<double>(simulated), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimulateReferenceMix)->Arg(1000000)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace spillway
