#include "executor/cost_model.h"

#include <algorithm>

namespace spillway {

double CostModel::TokenFlops(std::int64_t new_tokens, std::int64_t context_tokens) const {
  // Token i of a chunk attends to context_tokens + i earlier tokens; the sum over the chunk is
  // new_tokens * (context + (new_tokens - 1) / 2).
  const double d_attn = static_cast<double>(profile_.hidden_size);
  const double mean_ctx = static_cast<double>(context_tokens) + (new_tokens - 1) / 2.0;
  return static_cast<double>(new_tokens) *
         (2.0 * profile_.num_params + 2.0 * profile_.num_layers * mean_ctx * d_attn);
}

Seconds CostModel::Roofline(double flops, double bytes, std::int32_t num_seqs,
                            std::int32_t first_tokens) const {
  const double compute_s = flops / (profile_.peak_flops * profile_.mfu);
  const double memory_s = bytes / (profile_.hbm_bandwidth_bytes_per_s * profile_.mbu);
  return profile_.step_overhead_s + profile_.per_seq_overhead_s * num_seqs +
         profile_.first_token_overhead_s * first_tokens + std::max(compute_s, memory_s);
}

StepWork CostModel::Work(const StepPlan& plan) const {
  StepWork w;
  double kv_tokens = 0;
  for (const ScheduledSeq& s : plan.seqs) {
    w.flops += TokenFlops(s.num_new_tokens, s.num_context_tokens);
    kv_tokens += static_cast<double>(s.num_context_tokens + s.num_new_tokens);
    // A prompt's last chunk samples the request's first token (a recompute's last chunk
    // samples too: the engine rebuilds the request's state the same way).
    w.first_tokens += s.samples_token && !s.is_decode ? 1 : 0;
  }
  w.bytes = plan.empty() ? 0 : profile_.weight_bytes() + kv_tokens * profile_.kv_bytes_per_token();
  w.num_seqs = static_cast<std::int32_t>(plan.seqs.size());
  return w;
}

Seconds CostModel::StepTime(const StepWork& work) const {
  return work.num_seqs == 0 ? 0
                            : Roofline(work.flops, work.bytes, work.num_seqs, work.first_tokens);
}

Seconds CostModel::StepTime(std::int32_t num_decodes, std::int64_t context_tokens,
                            std::int32_t prefill_tokens, std::int64_t prefill_context) const {
  const double flops = num_decodes * TokenFlops(1, context_tokens) +
                       (prefill_tokens > 0 ? TokenFlops(prefill_tokens, prefill_context) : 0.0);
  const double kv_tokens = static_cast<double>(num_decodes) * (context_tokens + 1) +
                           (prefill_tokens > 0 ? prefill_context + prefill_tokens : 0);
  const double bytes = profile_.weight_bytes() + kv_tokens * profile_.kv_bytes_per_token();
  const std::int32_t seqs = num_decodes + (prefill_tokens > 0 ? 1 : 0);
  return seqs == 0 ? 0 : Roofline(flops, bytes, seqs, prefill_tokens > 0 ? 1 : 0);
}

}  // namespace spillway
