#include "admission/priors.h"

#include <algorithm>

namespace spillway {

ServiceEstimatorConfig EstimatorPriors(const CostModel& cost, const SchedulerConfig& scheduler,
                                       std::int64_t context_tokens) {
  ServiceEstimatorConfig c;
  const std::int32_t chunk = std::max(1, scheduler.max_num_batched_tokens - scheduler.max_num_seqs);
  c.step_time_prior_s =
      cost.StepTime(scheduler.max_num_seqs, context_tokens, chunk, context_tokens);
  // A full batch's prefill rate: the chunk left beside max_num_seqs decodes. What /metrics
  // shows and a gateway assumes until the engine measures itself (conservative: a gateway in
  // front of engines that admit everything, given the half-batch rate, admitted more than they
  // served in time: 33.25 req/s of goodput against 35.27 on seed-burst-x3). Admission itself
  // reads PrefillRates by the decodes a request will share its steps with.
  c.prefill_tokens_per_s_prior = chunk / c.step_time_prior_s;
  return c;
}

std::vector<double> PrefillRates(const CostModel& cost, const SchedulerConfig& scheduler,
                                 std::int64_t context_tokens) {
  const std::int32_t budget = std::max(1, scheduler.max_num_batched_tokens);
  const std::int32_t most = std::max(0, std::min(scheduler.max_num_seqs, budget - 1));
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(most) + 1);
  // The prompt's own overheads (its sequence, its first token) are not throughput: admission
  // adds them a prompt (AdmissionConfig::prefill_overhead_per_prompt_s).
  const Profile& p = cost.profile();
  const Seconds per_prompt = p.per_seq_overhead_s + p.first_token_overhead_s;
  for (std::int32_t d = 0; d <= most; ++d) {
    const std::int32_t prefill = budget - d;
    out.push_back(prefill /
                  (cost.StepTime(d, context_tokens, prefill, context_tokens) - per_prompt));
  }
  return out;
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
