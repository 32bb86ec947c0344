#pragma once
// Iteration-level scheduler with continuous batching (Orca, OSDI 2022; vLLM v1's Scheduler).
//
// Algorithm, once per iteration (Step):
//   1. apply pending aborts and stop requests: free their KV blocks, report them finished;
//   2. drop waiting requests whose queue-ingress deadline has passed, wherever they are in the
//      queue, without any prefill (never-scheduled requests only), every step: a request
//      overtaken by more urgent ones gets its 429 at its deadline, not a 504 at the request
//      deadline (vLLM #41951);
//   3. schedule running sequences first (decodes and unfinished prefill chunks), in running
//      order, within max_num_batched_tokens (a long prompt's chunk capped, see
//      long_prefill_token_threshold); when a sequence cannot get a KV block, preempt by
//      recompute the running sequence with the lowest priority, then the latest arrival (vLLM's
//      rule), possibly itself, and take it out of this step's plan if it was already in it;
//   4. if nothing was preempted, admit waiting sequences in queue order within max_num_seqs,
//      the token budget (chunked prefill) and the free blocks not reserved for running
//      prefills (a prompt of several steps only when its whole prefill fits, with the running
//      decodes' growth: no recompute thrash, vLLM #25538); stop at the first that does not
//      fit (FCFS, no overtaking). Under priority scheduling, when the batch is full by count,
//      the waiting request displaces (preempts by recompute) the running request that would
//      queue after it: of a less urgent class *and* with a later queue key (aging protects an
//      old request from newer urgent ones), the least urgent and latest first, each request at
//      most max_displacements times (vLLM #40004: an urgent request waited behind four less
//      urgent streams until its deadline). A waiting request that can never fit (longer than the
//      whole KV pool, or than the token budget without chunked prefill, as a recompute can
//      grow to be) is finished at once: kPreemptionLimit if preemption made it so, else
//      kRejected, so it cannot wedge the queue.
//   5. when nothing waits, give the budget still left to the planned long
//      prefills (their cap protects the others; alone, it does not leave the step short).
// Queue order: FCFS by arrival, or priority with aging, where a request's key is
// arrival_s + priority * priority_aging_s: a request of class p+1 waits at most priority_aging_s
// longer than one of class p that arrived at the same time, so no class starves.
//
// Prefix caching (BlockManager): a request taken off the queue starts from the blocks the cache
// holds for its prompt (all but its last token at most) and registers each block it fills; the
// backlog counts a waiting prompt without the tokens cached when it was queued.
//
// Invariants (CheckInvariants): each block's references are exactly the running tables holding
// it and no waiting request holds blocks; allocated blocks == distinct blocks of running tables;
// running <= max_num_seqs; counters match the queues. Not thread-safe; no clock, no I/O.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "executor/step_plan.h"
#include "kv/block_manager.h"
#include "sched/request.h"

namespace spillway {

enum class SchedulingPolicy : std::uint8_t { kFcfs, kPriority };

struct SchedulerConfig {
  std::int32_t max_num_seqs = 256;             ///< vLLM default
  std::int32_t max_num_batched_tokens = 2048;  ///< token budget per step
  bool enable_chunked_prefill = true;
  SchedulingPolicy policy = SchedulingPolicy::kFcfs;
  /// Seconds of waiting worth one priority class: a request of class p is scheduled before
  /// any of class q < p that arrived more than (p - q) x this after it (the starvation
  /// bound). 0.25 s: class 10 waits at most 2.5 s longer than class 0 (issue 12, finding 4;
  /// it was 10 s, so 100 s, past any client's patience).
  Seconds priority_aging_s = 0.25;
  std::int32_t max_preemptions = 0;  ///< per request; 0 = unlimited, else fail fast beyond it
  /// vLLM's long_prefill_token_threshold: with chunked prefill, a prompt longer than this is
  /// long, and takes at most long_prefill_max_chunk_tokens of a step while other requests
  /// can use the rest, so short prompts behind it still start and decodes keep their tokens
  /// (no head-of-line blocking, SGLang #22831, vLLM #21495). Budget nobody else used goes to
  /// the long prefill too (it is not capped when alone). 0 = no long prompts, no cap.
  std::int32_t long_prefill_token_threshold = 0;
  /// Prompt tokens of one long prompt per step while others wait; 0 = the threshold (vLLM).
  std::int32_t long_prefill_max_chunk_tokens = 0;
  /// The tokens a long prefill takes per step while others wait: the chunk, or the threshold.
  std::int32_t long_prefill_chunk_tokens() const {
    return long_prefill_max_chunk_tokens > 0 ? long_prefill_max_chunk_tokens
                                             : long_prefill_token_threshold;
  }
  /// vLLM's max_long_partial_prefills: with long_prefill_token_threshold set, at most this
  /// many requests whose prompt exceeds the threshold prefill in one step; waiting requests
  /// behind a long prompt that must wait are scheduled past it.
  std::int32_t max_long_partial_prefills = 1;
  /// Admit a waiting request only when the blocks it needs fit beside what the running
  /// prefills still need to finish their prompts: for a prompt that spans several steps, its
  /// whole prefill plus the running decodes' growth meanwhile. A long prompt no longer starts
  /// on one chunk's free blocks and is preempted mid-prefill again and again (vLLM #25538:
  /// 205 preemptions and 99% of prefill recomputed, in tests/engine/recompute_thrash_test.cc).
  bool reserve_prefill_blocks = true;
  /// While such a prompt waits for its whole prefill to fit, any request behind it that fits
  /// goes first for this many steps. After that, only those that do not delay its start (EASY
  /// backfilling, as HPC batch schedulers do it, e.g. Slurm's backfill): requests that finish,
  /// by their max_tokens, before the running requests' finishes free the blocks it needs, or
  /// that fit in the blocks left over then. 0: backfilling from the first step. It was 128 and
  /// then every request behind it waited: short requests waited 10 s behind a 16k-token
  /// prompt, and long outputs that passed it in those steps delayed it from 12 to 30 s
  /// (tests/engine/prefill_backfill_test.cc).
  std::int32_t max_prefill_bypass_steps = 0;
  /// Priority scheduling: how often one running request may be preempted to make room for a
  /// more urgent waiting one when the batch is full by count (0 = never).
  std::int32_t max_displacements = 2;
};

/// One output token, as reported by OnStepDone.
struct TokenEvent {
  RequestId id = 0;
  std::int32_t token_id = 0;
  std::int32_t index = 0;  ///< 0 for the first output token
};

/// What OnStepDone and Step report to the driver.
struct StepEvents {
  std::vector<TokenEvent> tokens;
  std::vector<Request> finished;  ///< final state of each request that left the engine
  void clear() {
    tokens.clear();
    finished.clear();
  }
};

/// Gauges the admission controller and /metrics read (a snapshot, cheap to copy).
struct EngineStats {
  std::int32_t num_waiting = 0;  ///< waiting + preempted requests
  std::int32_t num_running = 0;
  std::int64_t waiting_prompt_tokens = 0;   ///< tokens still to prefill for waiting requests
  std::int64_t prefill_backlog_tokens = 0;  ///< the above plus unfinished running prefills
  /// Of prefill_backlog_tokens, those of long prompts (SchedulerConfig::
  /// long_prefill_token_threshold): capped per step, they delay a short prompt only by
  /// their share of each step.
  std::int64_t long_prefill_backlog_tokens = 0;
  double kv_usage = 0;  ///< fraction of KV blocks allocated, [0, 1]
  std::int32_t num_free_blocks = 0;
  std::int32_t num_total_blocks = 0;
  std::int32_t block_size = 0;  ///< tokens per KV block
  std::int64_t num_preemptions_total = 0;
  std::int64_t num_recomputed_tokens_total = 0;
  /// Prefix caching, in prompt tokens (vLLM's prefix_cache_queries / prefix_cache_hits): the
  /// prompt tokens of the requests scheduled from the queue, and those found cached.
  std::int64_t prefix_cache_queries_total = 0;
  std::int64_t prefix_cache_hits_total = 0;
  std::int32_t num_cached_blocks = 0;  ///< blocks holding reusable prompt KV
  std::int32_t max_num_seqs = 0;
  /// For a request being admitted (Scheduler::StatsAhead): the waiting requests queued ahead
  /// of it, and their prompt tokens still to prefill plus the unfinished running prefills.
  /// -1 when not given: every waiting request counts (num_waiting, prefill_backlog_tokens).
  std::int32_t num_waiting_ahead = -1;
  std::int64_t prefill_backlog_ahead_tokens = -1;
  std::int64_t long_prefill_backlog_ahead_tokens = -1;  ///< of the above, from long prompts
  /// How much slower than modelled the engine's steps run: real step cycle over modelled step
  /// time, measured by the Engine over saturated steps (1: as modelled, always in virtual
  /// time). Set by the Engine, not the scheduler.
  double step_pace = 1.0;
};

class Scheduler {
 public:
  /// `blocks` must outlive the scheduler; the scheduler is its only user.
  Scheduler(SchedulerConfig config, BlockManager* blocks);
  /// A copy of `other`'s state over `blocks` (a copy of other's BlockManager): a what-if
  /// scheduler that can be stepped forward without touching the original (a step in flight
  /// stays in flight: OnStepDone ends it). O(live requests).
  Scheduler(const Scheduler& other, BlockManager* blocks);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// For what-if copies: sets every live request's max output to `expected(request)` (at
  /// least one more than it has generated) and drops its emulated EOS, so that it finishes
  /// where it is expected to.
  template <typename Fn>
  void SetExpectedOutputs(Fn expected) {
    for (auto& [id, r] : requests_) {
      r.spec.max_output_tokens = std::max(r.num_output_tokens + 1, expected(r));
      r.spec.emulated_output_tokens = 0;
    }
  }

  const SchedulerConfig& config() const { return config_; }

  /// Enqueues a request (id unique among live requests; prompt_tokens > 0, max_output > 0).
  void Submit(const RequestSpec& spec);

  /// Asks that `id` stop with `reason` (kAbort or kStop) at the next Step. Returns false when
  /// the id is unknown or already finished (a late abort is harmless).
  bool Finish(RequestId id, FinishReason reason);
  bool Abort(RequestId id) { return Finish(id, FinishReason::kAbort); }

  /// Plans the next iteration at time `now`. Requests finished by aborts, deadline drops and
  /// the preemption cap are appended to `events->finished`. The plan stays valid until the
  /// next call; an empty plan means there is nothing to run.
  const StepPlan& Step(Seconds now, StepEvents* events);

  /// Applies the executor's result for the last plan, at time `now` (the step's end): advances
  /// computed tokens, appends sampled tokens, finishes requests that reached max output.
  void OnStepDone(const StepResult& result, Seconds now, StepEvents* events);

  /// The live request `id`, or nullptr.
  const Request* Find(RequestId id) const;
  /// Calls `fn(const Request&)` for every live request, in no particular order.
  template <typename Fn>
  void ForEachLive(Fn fn) const {
    for (const auto& [id, r] : requests_) {
      fn(r);
    }
  }

  EngineStats stats() const;
  /// stats() as a new request of `priority` arriving at `now` would see the queue, with
  /// num_waiting_ahead and prefill_backlog_ahead_tokens counting only the waiting requests
  /// whose queue key is at most its own (arrival + priority x priority_aging_s): those it would
  /// not overtake. Under FCFS that is every waiting request, and the fields stay -1.
  /// O(requests ahead).
  EngineStats StatsAhead(std::int32_t priority, Seconds now) const;
  bool idle() const { return running_.empty() && waiting_.empty(); }
  std::int32_t num_waiting() const { return static_cast<std::int32_t>(waiting_.size()); }
  std::int32_t num_running() const { return static_cast<std::int32_t>(running_.size()); }

  /// Checks every invariant listed above; on failure returns false with the reason.
  bool CheckInvariants(std::string* error) const;

 private:
  using QueueEntry = std::pair<double, RequestId>;

  double QueueKey(const RequestSpec& spec) const;
  void ApplyPendingFinishes(StepEvents* events);
  /// `num_new` tokens of `r`, capped at the long-prefill chunk when `r` is a long prefill.
  std::int64_t CapLongPrefill(const Request& r, std::int64_t num_new) const;
  /// True when `r`'s prompt is longer than long_prefill_token_threshold (> 0, chunked).
  bool IsLongPrompt(const Request& r) const;
  /// True when `r` is long and still prefilling.
  bool IsLongPrefill(const Request& r) const;
  void ScheduleRunning(Seconds now, StepEvents* events, bool* preempted_any);
  /// When nothing waits, gives the budget left after everything else to the planned long
  /// prefills (the cap protects others, nobody is left to protect), without preempting and
  /// keeping a block of headroom per running sequence. With other long prompts waiting, a
  /// top-up took the KV pool sooner: 56 preemptions against 20 on
  /// scenarios/failure/long-prompt-burst.yaml (21 with this rule, before the prefill block
  /// reservation; 0 with it).
  void TopUpLongPrefills();
  /// Adds (`sign` +1) or removes (-1) `r`'s tokens to prefill to the waiting counters.
  void CountWaiting(const Request& r, int sign);
  /// The tokens waiting `r` has to prefill: all but those cached when it was queued.
  static std::int64_t WaitingPrefillTokens(const Request& r) {
    return r.num_tokens() - r.num_computed_tokens - r.num_cached_tokens;
  }
  /// Prefix caching: how many leading blocks of `r`'s prompt the cache holds (extends its
  /// block_hashes to the prompt); 0 without caching.
  std::int32_t CachedPrefixBlocks(Request* r) const;
  /// `r`, just taken off the queue with `cached_tokens` of its prompt found cached, starts from
  /// them; counts the lookup.
  void StartFromCache(Request* r, std::int64_t cached_tokens);
  /// Registers `r`'s blocks that became full in the cache.
  void RegisterFullBlocks(Request* r);
  /// The same for a running request's unfinished prefill.
  void CountRunningPrefill(const Request& r, int sign);
  void ScheduleWaiting(Seconds now, StepEvents* events);
  /// Blocks the running prefills still need to finish their prompts (reserve_prefill_blocks).
  std::int64_t ReservedPrefillBlocks() const;
  /// When the waiting prompt blocked for longer than max_prefill_bypass_steps may start, by
  /// the running requests' max_tokens: `shadow_steps` steps from now, with `surplus_blocks`
  /// free beyond what it needs then. Requests may pass it if they finish by then or fit in
  /// the surplus.
  struct Backfill {
    std::int64_t shadow_steps = 0;
    std::int64_t surplus_blocks = 0;
  };
  /// The Backfill of a blocked prompt with `tokens` to prefill, `num_new` a step, while
  /// `reserved` of the free blocks are spoken for; nullopt when no set of finishes makes room.
  /// O(running log running), plus the running requests' blocks with prefix caching.
  std::optional<Backfill> Shadow(std::int64_t tokens, std::int64_t num_new,
                                 std::int64_t reserved) const;
  /// True when `r` (waiting, `num_new` tokens of its prefill this step) does not delay the
  /// blocked prompt of `backfill`: it finishes by the shadow, or its blocks at its finish fit
  /// in the surplus (then taken from it).
  bool MayBackfill(const Request& r, std::int64_t num_new, Backfill* backfill) const;
  /// Steps until `r` finishes by max_tokens when its prefill goes `chunk` tokens a step.
  std::int64_t StepsToFinish(const Request& r, std::int64_t chunk) const;
  /// Blocks a waiting request with `tokens` to prefill, `num_new` of them this step, needs
  /// to be admitted under reserve_prefill_blocks: this step's, or for a prefill of several
  /// steps its whole prompt's plus a block per running sequence per block_size steps.
  std::int64_t BlocksToAdmit(std::int64_t tokens, std::int64_t num_new) const;
  /// Index in running_ of the request to preempt: lowest priority, then latest arrival.
  std::size_t VictimIndex() const;
  /// Priority scheduling, batch full by count: preempts the running request `r` would queue
  /// before (see step 4 above), when its blocks make room for `r`'s first `tokens`. False
  /// when there is none.
  bool Displace(const Request& r, std::int64_t tokens, StepEvents* events);
  /// Preempts running_[index] by recompute (or fails it past the preemption cap).
  void Preempt(std::size_t index, StepEvents* events);
  /// Takes `r` out of this step's plan if it is in it, returning its token budget.
  void Unplan(Request* r);
  /// Drops every waiting request whose queue-ingress deadline has passed, wherever it is in
  /// the queue and whether or not the batch has room this step (so they stop counting as
  /// queued work at once). O(expired x log n), by the deadline index.
  void DropExpired(Seconds now, StepEvents* events);
  /// Takes the waiting entry `it` of `r` out of the queue, its counters and the deadline
  /// index; returns the next entry.
  std::set<QueueEntry>::iterator EraseWaiting(std::set<QueueEntry>::iterator it, const Request& r);
  /// True when `r` (waiting) can never be scheduled: without chunked prefill its tokens exceed
  /// the token budget, or its KV exceeds the whole pool.
  bool NeverFits(const Request& r) const;
  void Plan(Request* r, std::int32_t num_new, Seconds now);
  void Retire(Request* r, FinishReason reason, Seconds now, StepEvents* events);
  void EnqueueWaiting(Request* r);
  void EraseRunning(Request* r);

  SchedulerConfig config_;
  BlockManager* blocks_;
  std::unordered_map<RequestId, Request> requests_;  // live requests (node-stable)
  std::set<QueueEntry> waiting_;
  /// Waiting requests never scheduled, by queue-ingress deadline (finite ones only).
  std::set<std::pair<Seconds, RequestId>> deadlines_;
  std::vector<Request*> running_;
  std::vector<Request*> pending_finish_;
  std::vector<Request*> planned_;    // parallel to plan_.seqs
  std::vector<Request*> finishing_;  // OnStepDone: those the step finished
  StepPlan plan_;
  std::int32_t budget_tokens_ = 0;
  std::int32_t long_prefills_planned_ = 0;  // this step (max_long_partial_prefills)
  std::int64_t waiting_prompt_tokens_ = 0;
  std::int64_t running_prefill_tokens_ = 0;  // unfinished prefill of running requests
  std::int64_t long_waiting_tokens_ = 0;     // of the above two, from long prompts
  std::int64_t long_running_prefill_tokens_ = 0;
  std::int64_t num_preemptions_total_ = 0;
  std::int64_t num_recomputed_tokens_total_ = 0;
  std::int64_t prefix_cache_queries_total_ = 0;
  std::int64_t prefix_cache_hits_total_ = 0;
  Seconds now_ = 0;
};

}  // namespace spillway
