// libFuzzer target: the scenario loader (LoadScenarioFromString, workload/scenario.h) and, for
// scenarios that load, GenerateArrivals.
//
// The loader's contract: a scenario, or config::ConfigError; any other exception escapes this
// function and libFuzzer reports it as a crash. Arrivals are generated only for synthetic
// scenarios expecting at most kMaxExpectedArrivals (trace scenarios read files; the loader
// itself admits up to 1e7 arrivals, too slow per input) and must be sorted, inside the
// schedule, and drawn from their class's distributions and step mix.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config/config_error.h"
#include "core/check.h"
#include "workload/arrivals.h"
#include "workload/scenario.h"

namespace {

using spillway::ArrivalProcess;
using spillway::Scenario;

constexpr double kMaxExpectedArrivals = 10'000;
/// Relative trace paths resolve here, where no file is; absolute ones may still load.
constexpr const char* kBaseDir = "/nonexistent-spillway-fuzz";

double ExpectedArrivals(const ArrivalProcess& arrival) {
  if (arrival.kind == ArrivalProcess::Kind::kPoisson) {
    return arrival.rate_rps * arrival.duration_s;
  }
  double expected = 0;
  for (const spillway::RateStep& step : arrival.steps) {
    expected += step.rate_rps * step.duration_s;
  }
  return expected;
}

bool InDist(std::int32_t tokens, const spillway::TokenDist& dist) {
  if (dist.kind == spillway::TokenDist::Kind::kFixed) {
    return tokens == std::max(dist.value, 1);
  }
  return tokens >= std::max(dist.min, 1) && tokens <= dist.max;
}

/// The step an arrival at `t` belongs to, as GenerateArrivals assigns it.
std::size_t StepOf(const ArrivalProcess& arrival, spillway::Seconds t) {
  std::size_t step = 0;
  spillway::Seconds end_s = 0;
  for (; step < arrival.steps.size(); ++step) {
    end_s += arrival.steps[step].duration_s;
    if (t < end_s || step + 1 == arrival.steps.size()) {
      break;
    }
  }
  return step;
}

void CheckArrivals(const Scenario& s) {
  const std::vector<spillway::Arrival> arrivals = spillway::GenerateArrivals(s, s.seed);
  const spillway::Seconds span_s = s.ArrivalSpan();
  spillway::Seconds previous_s = 0;
  for (const spillway::Arrival& a : arrivals) {
    SPILLWAY_CHECK(a.time_s >= previous_s && a.time_s < span_s);
    previous_s = a.time_s;
    SPILLWAY_CHECK(a.class_index >= 0 &&
                   static_cast<std::size_t>(a.class_index) < s.classes.size());
    const spillway::RequestClass& c = s.classes[static_cast<std::size_t>(a.class_index)];
    SPILLWAY_CHECK(InDist(a.prompt_tokens, c.prompt_tokens));
    SPILLWAY_CHECK(InDist(a.output_tokens, c.output_tokens));
    SPILLWAY_CHECK(a.priority == c.priority && a.tenant == c.tenant);
    if (s.arrival.kind == ArrivalProcess::Kind::kSteps) {
      const spillway::RateStep& step = s.arrival.steps[StepOf(s.arrival, a.time_s)];
      SPILLWAY_CHECK(step.mix.empty() || step.mix[static_cast<std::size_t>(a.class_index)] > 0);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  Scenario scenario;
  try {
    scenario = spillway::LoadScenarioFromString(yaml, "<fuzz>", kBaseDir);
  } catch (const spillway::config::ConfigError&) {
    return 0;  // the documented failure
  }
  SPILLWAY_CHECK(!scenario.name.empty());
  if (scenario.arrival.kind == ArrivalProcess::Kind::kTrace) {
    return 0;
  }
  SPILLWAY_CHECK(!scenario.classes.empty());
  if (ExpectedArrivals(scenario.arrival) <= kMaxExpectedArrivals) {
    CheckArrivals(scenario);
  }
  return 0;
}
