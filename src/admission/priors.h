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
/// / the step time; service rate unknown (0) until measured.
ServiceEstimatorConfig EstimatorPriors(const CostModel& cost, const SchedulerConfig& scheduler,
                                       std::int64_t context_tokens = 256);

/// Modelled decode step times by batch size: element b-1 is a step of b decodes at
/// `context_tokens` of context each, for b = 1..max_num_seqs; seconds. For the request
/// deadline check (AdmissionConfig::decode_step_s_by_batch).
std::vector<Seconds> DecodeStepTimes(const CostModel& cost, std::int32_t max_num_seqs,
                                     std::int64_t context_tokens = 256);

}  // namespace spillway
