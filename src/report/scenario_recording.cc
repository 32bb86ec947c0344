#include "report/scenario_recording.h"

#include <algorithm>

namespace spillway {

GoodputSlo SloOf(const Scenario& scenario) {
  return {scenario.slo.ttft_s, scenario.slo.tpot_s, scenario.slo.e2e_s};
}

std::vector<RunRecorder::Phase> PhasesOf(const Scenario& scenario, Seconds until_s) {
  std::vector<RunRecorder::Phase> phases;
  const ArrivalProcess& a = scenario.arrival;
  if (a.kind == ArrivalProcess::Kind::kSteps) {
    double t = 0;
    for (const RateStep& s : a.steps) {
      phases.push_back({t, t + s.duration_s, s.rate_rps});
      t += s.duration_s;
    }
  } else if (a.kind == ArrivalProcess::Kind::kPoisson) {
    phases.push_back({0, a.duration_s, a.rate_rps});
  }
  std::erase_if(phases, [until_s](const RunRecorder::Phase& p) { return p.start_s >= until_s; });
  for (RunRecorder::Phase& p : phases) {
    p.end_s = std::min(p.end_s, until_s);
  }
  return phases;
}

}  // namespace spillway
