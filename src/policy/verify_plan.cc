#include "policy/verify_plan.h"

#include <algorithm>

namespace spillway::policy {
namespace {

double NumberOr(const Policy& p, std::string_view path, double fallback) {
  return p.Number(path).value_or(fallback);
}

// The workload's classes and the policy's SLOs and client timeout, without arrivals, retries
// or fleet: what every verification run starts from.
Scenario Base(const Policy& p, const Scenario& workload, std::string_view suffix) {
  Scenario s;
  s.name = workload.name + "-verify-" + std::string(suffix);
  s.file = workload.file;
  s.seed = workload.seed;
  s.classes = workload.classes;
  s.settings = workload.settings;
  s.admission = workload.admission;
  s.slo.ttft_s = NumberOr(p, "slo.ttft_p95_s", workload.slo.ttft_s.value_or(kNever));
  s.slo.tpot_s = NumberOr(p, "slo.tpot_p95_s", workload.slo.tpot_s.value_or(kNever));
  s.slo.e2e_s = workload.slo.e2e_s;
  s.objectives.ttft_p95_s = s.slo.ttft_s;
  s.objectives.tpot_p95_s = s.slo.tpot_s;
  if (const auto e2e = p.Number("slo.e2e_p99_s")) {
    s.objectives.e2e_p99_s = *e2e;
  }
  s.client = workload.client;
  s.client.retry = RetryPolicy::kNone;
  s.client.max_attempts = 1;
  if (const auto client_s = p.Number("timeouts.client_s")) {
    s.client.total_timeout_s = *client_s;
    s.client.ttft_timeout_s = std::min(s.client.ttft_timeout_s, *client_s);
  }
  return s;
}

Scenario Poisson(const Policy& p, const Scenario& workload, std::string_view suffix,
                 double rate_rps, Seconds duration_s) {
  Scenario s = Base(p, workload, suffix);
  s.arrival.kind = ArrivalProcess::Kind::kPoisson;
  s.arrival.rate_rps = rate_rps;
  s.arrival.duration_s = duration_s;
  return s;
}

}  // namespace

Scenario BaselineScenario(const Policy& policy, const Scenario& workload, Seconds duration_s) {
  return Poisson(policy, workload, "baseline", NumberOr(policy, "workload.base_rate_rps", 1),
                 duration_s);
}

Scenario BurstScenario(const Policy& policy, const Scenario& workload, Seconds duration_s) {
  const Seconds limit_s = NumberOr(policy, "workload.burst_duration_s", duration_s);
  return Poisson(policy, workload, "burst", NumberOr(policy, "workload.burst_rate_rps", 1),
                 std::min(duration_s, limit_s));
}

Scenario RetryStormScenario(const Policy& policy, const Scenario& workload) {
  Scenario s = Base(policy, workload, "retry-storm");
  s.arrival.kind = ArrivalProcess::Kind::kBurst;
  s.arrival.burst_count = kRetryStormClients;
  s.arrival.duration_s = 1;
  const auto retries = static_cast<std::int32_t>(NumberOr(policy, "retry.max_retries", 3));
  s.client.retry = retries > 0 ? RetryPolicy::kBackoffJitter : RetryPolicy::kNone;
  s.client.max_attempts = 1 + retries;
  s.client.use_retry_after = true;
  s.client.backoff_base_s = 1;
  s.client.jitter_s = kRetryStormJitterS;
  s.client.retry_budget = 0;
  return s;
}

Scenario DisconnectScenario(const Policy& policy, const Scenario& workload, std::int32_t streams,
                            std::int32_t output_tokens, Seconds leave_after_s) {
  Scenario s = Base(policy, workload, "disconnect");
  RequestClass c;
  if (!workload.classes.empty()) {
    c = *std::max_element(
        workload.classes.begin(), workload.classes.end(),
        [](const RequestClass& a, const RequestClass& b) { return a.share < b.share; });
  }
  c.name = "disconnect";
  c.share = 1;
  c.output_tokens = TokenDist{};
  c.output_tokens.value = output_tokens;
  c.max_tokens = 0;  // exact: sent as max_tokens with ignore_eos
  c.distinct_prompts = 0;
  s.classes = {c};
  s.arrival.kind = ArrivalProcess::Kind::kBurst;
  s.arrival.burst_count = streams;
  s.arrival.duration_s = 1;
  s.client.ttft_timeout_s = kNever;
  s.client.total_timeout_s = leave_after_s;
  return s;
}

Scenario ReplayScenario(const Scenario& workload, Seconds max_span_s) {
  Scenario s = workload;
  s.name = workload.name + "-verify-replay";
  if (s.ArrivalSpan() <= max_span_s) {
    return s;
  }
  if (s.arrival.kind == ArrivalProcess::Kind::kSteps) {
    std::vector<RateStep> kept;
    Seconds at_s = 0;
    for (RateStep step : s.arrival.steps) {
      if (at_s >= max_span_s) {
        break;
      }
      step.duration_s = std::min(step.duration_s, max_span_s - at_s);
      at_s += step.duration_s;
      kept.push_back(step);
    }
    s.arrival.steps = kept;
  } else {
    s.arrival.duration_s = max_span_s;
  }
  return s;
}

}  // namespace spillway::policy
