#pragma once
// Runs the policy tests build: a naive FIFO run as `spillway sim --json` writes it.

#include <string>

#include "report/run_summary.h"

namespace spillway::policy_test {

// A naive FIFO run as sim --json writes it: 20 engine seconds on work that did not complete.
inline RunSummary NaiveRun(const std::string& policy) {
  RunSummary r;
  r.source = "sim";
  r.policy = policy;
  r.profile = "seed-a100-7b";
  r.duration_s = 60;
  r.not_completed_engine_s = 20;
  r.gpu_hour_usd = 3.6;
  r.command = "spillway sim --scenario s.yaml --compare unbounded,predictive --json runs.json";
  r.started_at = "2026-12-05T13:00:00Z";
  return r;
}

}  // namespace spillway::policy_test
