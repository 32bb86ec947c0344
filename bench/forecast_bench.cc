// Cost of one TTFT forecast (Engine::ForecastFirstToken, the forecast policy's question): the
// reference engine (seed-a100-7b, 27 slots) with a full batch and Arg(0) requests waiting, a
// new request forecast to the policy's horizon (the 1 s SLO). A refusal in a burst costs
// one forecast to the horizon, unless one of its shape was made since the engine last changed
// (Engine's memo).

#include <benchmark/benchmark.h>

#include <string>

#include "config/engine_settings.h"
#include "engine/engine.h"
#include "engine/resolve.h"

namespace spillway {
namespace {

void BM_ForecastFirstToken(benchmark::State& state) {
  config::EngineSettings settings;
  settings.profile = "seed-a100-7b";
  settings.policy = "unbounded";
  Engine engine(ResolveEngine(settings, std::string(SPILLWAY_SOURCE_DIR) + "/profiles"), 0);
  EngineRequest r;
  r.prompt_tokens = 128;
  r.max_tokens = 128;
  r.ignore_eos = true;
  const auto waiting = static_cast<int>(state.range(0));
  for (RequestId id = 1; id <= static_cast<RequestId>(27 + waiting); ++id) {
    engine.Offer(id, r, 0);
  }
  Seconds now = 0;
  for (int i = 0; i < 8; ++i) {  // the batch running, the rest waiting
    engine.BeginStep(now);
    now += engine.step().duration_s;
    engine.EndStep(now);
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(engine.ForecastFirstToken(r, now, 1.0));
  }
}
BENCHMARK(BM_ForecastFirstToken)->Arg(0)->Arg(16)->Arg(256)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace spillway
