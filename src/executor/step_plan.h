#pragma once
// What one engine iteration does: the batch the scheduler chose and what the executor returns.

#include <cstdint>
#include <vector>

#include "core/types.h"

namespace spillway {

/// One sequence's share of an iteration.
struct ScheduledSeq {
  RequestId id = 0;
  /// Tokens computed this step: a prefill chunk (>= 1), or 1 for a decode.
  std::int32_t num_new_tokens = 0;
  /// Tokens already in the KV cache before this step (the attention context).
  std::int64_t num_context_tokens = 0;
  /// True when this step completes the sequence's prompt (or recompute) or decodes, so the
  /// executor samples one output token for it. False for a non-final prefill chunk.
  bool samples_token = false;
  /// True for a decode step (one new token after the prompt was processed).
  bool is_decode = false;
};

/// The batch for one iteration, as the scheduler planned it (vLLM's SchedulerOutput).
struct StepPlan {
  std::vector<ScheduledSeq> seqs;
  std::int32_t num_prefill_tokens = 0;  ///< Prompt (and recompute) tokens in this step.
  std::int32_t num_decode_tokens = 0;   ///< Decode tokens, one per decoding sequence.

  bool empty() const { return seqs.empty(); }
  std::int32_t num_tokens() const { return num_prefill_tokens + num_decode_tokens; }
  void clear() {
    seqs.clear();
    num_prefill_tokens = 0;
    num_decode_tokens = 0;
  }
};

/// What the executor returns for one StepPlan.
struct StepResult {
  /// Wall (live) or virtual (simulated) duration of the iteration, seconds.
  Seconds duration_s = 0;
  /// One sampled token id per ScheduledSeq with samples_token, in plan order.
  std::vector<std::int32_t> token_ids;
};

}  // namespace spillway
