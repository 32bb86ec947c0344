#pragma once
// The load tests `spillway policy verify` runs against a live deployment, as scenarios built
// from the policy and its workload scenario (the request classes, their mix and lengths): one
// per item of the lesson's VALIDATION CHECKLIST that needs traffic
// (../shared/seeds/overload-and-failure-handling.txt §7). Every scenario carries the policy's
// SLOs as its goodput SLOs and sends no retries unless it tests them. Pure: the same scenarios
// drive `spillway bench` live and `spillway sim` (the trace replay's prediction).

#include <cstdint>

#include "core/types.h"
#include "policy/policy.h"
#include "workload/scenario.h"

namespace spillway::policy {

/// The replica baseline: Poisson arrivals at workload.base_rate_rps for `duration_s`, the
/// workload's class mix, the client timeout timeouts.client_s, no retries.
Scenario BaselineScenario(const Policy& policy, const Scenario& workload, Seconds duration_s);

/// The admission load test: Poisson arrivals at workload.burst_rate_rps for `duration_s` (at
/// most workload.burst_duration_s), otherwise as the baseline.
Scenario BurstScenario(const Policy& policy, const Scenario& workload, Seconds duration_s);

/// Clients in the lesson's retry storm (§7: "100 clients x 3 retries with jitter").
inline constexpr std::int64_t kRetryStormClients = 100;
/// The jitter the lesson's retry snippet adds to each backoff (§3.3: random.uniform(0, 0.5)).
inline constexpr Seconds kRetryStormJitterS = 0.5;

/// The retry storm: kRetryStormClients requests at once (a synchronised first wave, the worst
/// case), each retrying refusals as the policy's retry guidance says: at most retry.max_retries
/// times, after Retry-After x 2^(attempt - 1) (1 s without one) plus uniform [0, 0.5 s).
Scenario RetryStormScenario(const Policy& policy, const Scenario& workload);

/// The disconnect test: `streams` requests at once of the workload's most common class's
/// prompt, each generating exactly `output_tokens`, whose clients close the connection
/// `leave_after_s` after sending (mid-stream when leave_after_s falls between the first token
/// and the last).
Scenario DisconnectScenario(const Policy& policy, const Scenario& workload, std::int32_t streams,
                            std::int32_t output_tokens, Seconds leave_after_s);

/// The trace replay: `workload` as it is (its arrivals, clients and SLOs), its arrival span
/// cut at `max_span_s` (a steps process loses the steps after it, a Poisson, burst or trace
/// process gets it as its window; a shorter span stays).
Scenario ReplayScenario(const Scenario& workload, Seconds max_span_s);

}  // namespace spillway::policy
