#pragma once
// Roofline cost model of one batch iteration.
//
// Algorithm (per step):
//   flops      = sum over new tokens of (2 * N + 2 * n_layer * n_ctx * d_attn)
//                (forward FLOPs per token, Kaplan et al. 2020, "Scaling Laws for Neural
//                Language Models", Table 1; n_ctx = that token's attention context)
//   bytes_read = weight bytes + KV bytes of every scheduled sequence's context and new tokens
//   step time  = step_overhead + per_seq_overhead * seqs
//                + first_token_overhead * (seqs sampling their first token this step)
//                + max(flops / (peak_flops * mfu), bytes_read / (hbm_bandwidth * mbu))
// Prefill is compute-bound, decode memory-bound: the max() is the roofline.

#include <cstdint>

#include "config/profile.h"
#include "executor/step_plan.h"

namespace spillway {

/// What one step asks of the GPU, before any efficiency term: the same under every profile
/// that shares its hardware and model figures (a fit times it under many).
struct StepWork {
  double flops = 0;               ///< forward FLOPs of every new token
  double bytes = 0;               ///< weights and KV read, bytes
  std::int32_t num_seqs = 0;      ///< sequences in the step (0: an empty step, no time)
  std::int32_t first_tokens = 0;  ///< sequences sampling their first token
};

class CostModel {
 public:
  explicit CostModel(Profile profile) : profile_(std::move(profile)) {}

  const Profile& profile() const { return profile_; }

  /// Modelled duration of `plan`, seconds. An empty plan costs 0.
  Seconds StepTime(const StepPlan& plan) const { return StepTime(Work(plan)); }

  /// The FLOPs, bytes and sequences of `plan` (StepTime(Work(plan)) == StepTime(plan)).
  StepWork Work(const StepPlan& plan) const;
  /// Modelled duration of a step asking `work`, seconds; 0 for an empty step.
  Seconds StepTime(const StepWork& work) const;

  /// Duration of a step that decodes `num_decodes` sequences of `context_tokens` each and
  /// prefills `prefill_tokens` more tokens of one sequence with `prefill_context` tokens of
  /// context. Used to size SLO-safe budgets and in tests; seconds. A prefill is counted as
  /// one that completes (its first-token overhead included: the bound a budget must hold).
  Seconds StepTime(std::int32_t num_decodes, std::int64_t context_tokens,
                   std::int32_t prefill_tokens, std::int64_t prefill_context = 0) const;

 private:
  Seconds Roofline(double flops, double bytes, std::int32_t num_seqs,
                   std::int32_t first_tokens) const;
  double TokenFlops(std::int64_t new_tokens, std::int64_t context_tokens) const;

  Profile profile_;
};

}  // namespace spillway
