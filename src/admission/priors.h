#pragma once
// Priors for the ServiceEstimator before the engine has measured itself: taken from the cost
// model at the configured batch budgets, so predictive admission is sane from the first request
// and corrects itself within a few windows.

#include <vector>

#include "admission/service_estimator.h"
#include "executor/cost_model.h"
#include "sched/scheduler.h"

namespace spillway {

/// step time prior = modelled time of a full step (max_num_seqs decodes at `context_tokens`
/// plus the rest of the token budget as prefill); prefill throughput prior = that prefill chunk
/// / the step time (what /metrics shows and a gateway assumes until the engine measures itself;
/// admission reads PrefillRates); service rate unknown (0) until measured.
ServiceEstimatorConfig EstimatorPriors(const CostModel& cost, const SchedulerConfig& scheduler,
                                       std::int64_t context_tokens = 256);

/// Modelled prefill throughput by the decodes sharing the step: element d is the prefill
/// tokens/s of a step that decodes d sequences of `context_tokens` and prefills the rest of the
/// token budget, for d = 0..min(max_num_seqs, max_num_batched_tokens - 1), without the
/// prompt's own per-sequence and first-token overheads (admission adds those a prompt);
/// tokens/s. Before the
/// engine has measured a step with a full token budget, admission reads it at the decodes a
/// request will share its steps with (AdmissionConfig::prefill_tokens_per_s_by_decodes): a
/// fresh engine is not full, and a full batch's rate refused 110 of a burst of 120 that it
/// served within the SLO (issue 12, finding 5).
std::vector<double> PrefillRates(const CostModel& cost, const SchedulerConfig& scheduler,
                                 std::int64_t context_tokens = 256);

/// Modelled decode step times by batch size: element b-1 is a step of b decodes at
/// `context_tokens` of context each, for b = 1..max_num_seqs; seconds. For the request
/// deadline check (AdmissionConfig::decode_step_s_by_batch).
std::vector<Seconds> DecodeStepTimes(const CostModel& cost, std::int32_t max_num_seqs,
                                     std::int64_t context_tokens = 256);

}  // namespace spillway
