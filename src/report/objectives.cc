#include "report/objectives.h"

namespace spillway {

void EvaluateObjectives(const Objectives& o, RunSummary* s) {
  // A percentile of no samples proves nothing: the objective fails.
  auto at_most = [s](const char* name, const std::optional<double>& target, const Percentiles& p,
                     double value) {
    if (target) {
      s->objectives.push_back({name, *target, value, p.count > 0 && value <= *target});
    }
  };
  at_most("ttft_p95_s", o.ttft_p95_s, s->ttft_objective_s, s->ttft_objective_s.p95);
  at_most("tpot_p95_s", o.tpot_p95_s, s->tpot_s, s->tpot_s.p95);
  at_most("e2e_p99_s", o.e2e_p99_s, s->e2e_objective_s, s->e2e_objective_s.p99);
  if (o.goodput_fraction) {
    s->objectives.push_back({"goodput_fraction", *o.goodput_fraction, s->slo_attainment,
                             s->slo_attainment >= *o.goodput_fraction});
  }
}

}  // namespace spillway
