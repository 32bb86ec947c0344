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

std::vector<Seconds> DecodeStepTimes(const CostModel& cost, std::int32_t max_num_seqs,
                                     std::int64_t context_tokens) {
  std::vector<Seconds> out;
  out.reserve(static_cast<std::size_t>(std::max(0, max_num_seqs)));
  for (std::int32_t b = 1; b <= max_num_seqs; ++b) {
    out.push_back(cost.StepTime(b, context_tokens, 0, 0));
  }
  return out;
}

}  // namespace spillway
