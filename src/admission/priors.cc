#include "admission/priors.h"

#include <algorithm>

namespace spillway {

ServiceEstimatorConfig EstimatorPriors(const CostModel& cost, const SchedulerConfig& scheduler,
                                       std::int64_t context_tokens) {
  ServiceEstimatorConfig c;
  const std::int32_t chunk = std::max(1, scheduler.max_num_batched_tokens - scheduler.max_num_seqs);
  c.step_time_prior_s =
      cost.StepTime(scheduler.max_num_seqs, context_tokens, chunk, context_tokens);
  c.prefill_tokens_per_s_prior = chunk / c.step_time_prior_s;
  return c;
}

}  // namespace spillway
