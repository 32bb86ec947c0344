#pragma once
// A request's state inside the engine and the lifecycle it follows.
//
// Lifecycle: WAITING -> RUNNING (prefill, possibly in chunks, then decode) -> FINISHED with a
// reason; RUNNING -> PREEMPTED (blocks freed, recompute later) -> back in the waiting queue.
// Token bookkeeping follows vLLM v1: num_tokens = prompt + sampled outputs; a step computes
// num_tokens - num_computed_tokens tokens (a prefill chunk, a recompute, or one decode token)
// and samples the next output once every known token is in the KV cache.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/prompt_segments.h"
#include "core/types.h"

namespace spillway {

enum class RequestState : std::uint8_t { kWaiting, kRunning, kPreempted, kFinished };

enum class FinishReason : std::uint8_t {
  kNone,
  kStop,             ///< a stop condition (EOS or stop string), reported by the driver
  kLength,           ///< max output tokens reached
  kAbort,            ///< aborted: client disconnect, server timeout, shutdown
  kDeadline,         ///< dropped at the queue head after its queue-ingress deadline
  kRejected,         ///< never admitted (used by drivers for accounting)
  kPreemptionLimit,  ///< preempted more often than the configured cap: fails fast
};

/// Stable lower-case token for a reason ("stop", "length", ...), as in vLLM's finished_reason.
std::string_view ToString(FinishReason reason);
std::string_view ToString(RequestState state);

/// What a driver submits: the request's shape and its scheduling attributes.
struct RequestSpec {
  RequestId id = 0;
  std::int32_t prompt_tokens = 0;      ///< > 0
  std::int32_t max_output_tokens = 1;  ///< > 0; generation stops here (finish reason length)
  std::int32_t priority = 0;           ///< lower is more urgent (vLLM convention)
  Seconds arrival_s = 0;               ///< when the request reached the engine
  Seconds deadline_s = kNever;         ///< queue-ingress deadline: dropped at the head after it
  bool ignore_eos = false;             ///< vLLM's ignore_eos: generates exactly max_output_tokens
  /// Emulator only, hidden from admission: the model samples EOS as this output token and the
  /// request ends with finish reason stop (before max_output_tokens). 0: it never does
  /// (ignore_eos, or no length given), max_output_tokens ends it.
  std::int32_t emulated_output_tokens = 0;
  /// Its prompt's shared segments (prefix caching); null: every token is its own, so only its
  /// own recompute after a preemption can reuse its KV.
  std::shared_ptr<const PromptSegments> prompt_segments;
};

struct Request {
  RequestSpec spec;
  RequestState state = RequestState::kWaiting;
  FinishReason finish_reason = FinishReason::kNone;

  std::int64_t num_computed_tokens = 0;  ///< tokens whose KV is in the cache
  std::int32_t num_output_tokens = 0;    ///< tokens sampled so far
  std::int32_t num_preemptions = 0;
  std::int32_t num_displacements = 0;  ///< preemptions to make room for a more urgent request
  /// Steps this waiting prompt was passed over because its whole prefill did not fit yet
  /// (SchedulerConfig::reserve_prefill_blocks).
  std::int32_t num_blocked_steps = 0;
  /// Computed tokens its preemptions released (with prefix caching, some are found again).
  std::int64_t num_recomputed_tokens = 0;
  std::vector<std::int32_t> blocks;  ///< KV block table (referenced blocks)
  /// Prefix caching: the chained hashes of its full blocks known so far (sched/block_hashes.h),
  /// and how many of its table's blocks are registered in the cache.
  std::vector<std::uint64_t> block_hashes;
  std::int32_t num_registered_blocks = 0;
  /// Waiting: the prompt tokens the prefix cache held for it when it was queued, which the
  /// backlog does not count. Running: those it found cached when it was scheduled.
  std::int64_t num_cached_tokens = 0;

  Seconds first_scheduled_s = kNever;  ///< first time in a step's batch
  Seconds first_token_s = kNever;
  Seconds last_token_s = kNever;
  Seconds finished_s = kNever;

  double queue_key = 0;  ///< waiting-queue order (lower first); see Scheduler
  FinishReason pending_finish = FinishReason::kNone;  ///< set by Abort/Finish; applied in Step

  std::int64_t num_tokens() const { return spec.prompt_tokens + num_output_tokens; }
  bool ever_scheduled() const { return first_scheduled_s != kNever; }
  bool in_prefill() const {
    return num_computed_tokens < num_tokens() - 1 || num_output_tokens == 0;
  }
};

/// Prefill tokens `r` still has to compute: everything but a single pending decode token.
inline std::int64_t PrefillRemaining(const Request& r) {
  const std::int64_t left = r.num_tokens() - r.num_computed_tokens;
  return (r.num_output_tokens > 0 && left == 1) ? 0 : left;
}

}  // namespace spillway
