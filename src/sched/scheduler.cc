#include "sched/scheduler.h"

#include <algorithm>
#include <functional>

#include "core/check.h"

namespace spillway {
namespace {

// True when `r` has generated its last token: its max tokens, or the emulated model's EOS.
bool Finishes(const Request& r) {
  return r.num_output_tokens >= r.spec.max_output_tokens ||
         (r.spec.emulated_output_tokens > 0 &&
          r.num_output_tokens >= r.spec.emulated_output_tokens);
}

}  // namespace

Scheduler::Scheduler(SchedulerConfig config, BlockManager* blocks)
    : config_(config), blocks_(blocks) {
  SPILLWAY_CHECK(blocks_ != nullptr);
  SPILLWAY_CHECK(config_.max_num_seqs > 0 && config_.max_num_batched_tokens > 0);
  running_.reserve(static_cast<std::size_t>(config_.max_num_seqs));
}

double Scheduler::QueueKey(const RequestSpec& spec) const {
  if (config_.policy == SchedulingPolicy::kPriority) {
    return spec.arrival_s + spec.priority * config_.priority_aging_s;
  }
  return spec.arrival_s;
}

void Scheduler::Submit(const RequestSpec& spec) {
  SPILLWAY_CHECK(spec.prompt_tokens > 0 && spec.max_output_tokens > 0);
  auto [it, inserted] = requests_.try_emplace(spec.id);
  SPILLWAY_CHECK(inserted);
  Request& r = it->second;
  r.spec = spec;
  r.queue_key = QueueKey(spec);
  r.num_cached_tokens = std::int64_t{CachedPrefixBlocks(&r)} * blocks_->block_size();
  EnqueueWaiting(&r);
}

Scheduler::Scheduler(const Scheduler& other, BlockManager* blocks)
    : config_(other.config_),
      blocks_(blocks),
      requests_(other.requests_),
      waiting_(other.waiting_),
      deadlines_(other.deadlines_),
      plan_(other.plan_),
      budget_tokens_(other.budget_tokens_),
      long_prefills_planned_(other.long_prefills_planned_),
      waiting_prompt_tokens_(other.waiting_prompt_tokens_),
      running_prefill_tokens_(other.running_prefill_tokens_),
      long_waiting_tokens_(other.long_waiting_tokens_),
      long_running_prefill_tokens_(other.long_running_prefill_tokens_),
      num_preemptions_total_(other.num_preemptions_total_),
      num_recomputed_tokens_total_(other.num_recomputed_tokens_total_),
      prefix_cache_queries_total_(other.prefix_cache_queries_total_),
      prefix_cache_hits_total_(other.prefix_cache_hits_total_),
      now_(other.now_) {
  SPILLWAY_CHECK(blocks_ != nullptr);
  const auto remap = [this](const std::vector<Request*>& from) {
    std::vector<Request*> to;
    to.reserve(from.size());
    for (const Request* r : from) {
      to.push_back(&requests_.at(r->spec.id));
    }
    return to;
  };
  running_ = remap(other.running_);
  pending_finish_ = remap(other.pending_finish_);
  planned_ = remap(other.planned_);
}

void Scheduler::EnqueueWaiting(Request* r) {
  waiting_.emplace(r->queue_key, r->spec.id);
  CountWaiting(*r, +1);
  if (!r->ever_scheduled() && r->spec.deadline_s != kNever) {
    deadlines_.emplace(r->spec.deadline_s, r->spec.id);
  }
}

std::set<Scheduler::QueueEntry>::iterator Scheduler::EraseWaiting(std::set<QueueEntry>::iterator it,
                                                                  const Request& r) {
  CountWaiting(r, -1);
  deadlines_.erase({r.spec.deadline_s, r.spec.id});
  return waiting_.erase(it);
}

void Scheduler::CountWaiting(const Request& r, int sign) {
  const std::int64_t tokens = sign * WaitingPrefillTokens(r);
  waiting_prompt_tokens_ += tokens;
  long_waiting_tokens_ += IsLongPrompt(r) ? tokens : 0;
}

void Scheduler::CountRunningPrefill(const Request& r, int sign) {
  const std::int64_t tokens = sign * PrefillRemaining(r);
  running_prefill_tokens_ += tokens;
  long_running_prefill_tokens_ += IsLongPrompt(r) ? tokens : 0;
}

bool Scheduler::Finish(RequestId id, FinishReason reason) {
  SPILLWAY_CHECK(reason == FinishReason::kAbort || reason == FinishReason::kStop);
  auto it = requests_.find(id);
  if (it == requests_.end() || it->second.pending_finish != FinishReason::kNone) {
    return false;
  }
  it->second.pending_finish = reason;
  pending_finish_.push_back(&it->second);
  return true;
}

const Request* Scheduler::Find(RequestId id) const {
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : &it->second;
}

void Scheduler::EraseRunning(Request* r) {
  auto it = std::find(running_.begin(), running_.end(), r);
  SPILLWAY_CHECK(it != running_.end());
  running_.erase(it);
}

void Scheduler::Retire(Request* r, FinishReason reason, Seconds now, StepEvents* events) {
  if (r->state == RequestState::kRunning) {
    CountRunningPrefill(*r, -1);
  }
  blocks_->Release(r->blocks);
  r->state = RequestState::kFinished;
  r->finish_reason = reason;
  r->finished_s = now;
  events->finished.push_back(std::move(*r));
  requests_.erase(r->spec.id);
}

void Scheduler::ApplyPendingFinishes(StepEvents* events) {
  for (Request* r : pending_finish_) {
    if (r->state == RequestState::kRunning) {
      EraseRunning(r);
    } else {
      EraseWaiting(waiting_.find({r->queue_key, r->spec.id}), *r);
    }
    Retire(r, r->pending_finish, now_, events);
  }
  pending_finish_.clear();
}

const StepPlan& Scheduler::Step(Seconds now, StepEvents* events) {
  now_ = now;
  plan_.clear();
  planned_.clear();
  ApplyPendingFinishes(events);
  DropExpired(now, events);
  budget_tokens_ = config_.max_num_batched_tokens;
  long_prefills_planned_ = 0;
  bool preempted_any = false;
  ScheduleRunning(now, events, &preempted_any);
  if (!preempted_any) {
    ScheduleWaiting(now, events);
    TopUpLongPrefills();
  }
  return plan_;
}

void Scheduler::Plan(Request* r, std::int32_t num_new, Seconds now) {
  ScheduledSeq s;
  s.id = r->spec.id;
  s.num_new_tokens = num_new;
  s.num_context_tokens = r->num_computed_tokens;
  s.samples_token = r->num_computed_tokens + num_new == r->num_tokens();
  s.is_decode = PrefillRemaining(*r) == 0;
  if (s.is_decode) {
    plan_.num_decode_tokens += num_new;
  } else {
    plan_.num_prefill_tokens += num_new;
  }
  if (!r->ever_scheduled()) {
    r->first_scheduled_s = now;
  }
  budget_tokens_ -= num_new;
  plan_.seqs.push_back(s);
  planned_.push_back(r);
}

bool Scheduler::IsLongPrompt(const Request& r) const {
  const std::int32_t threshold = config_.long_prefill_token_threshold;
  return config_.enable_chunked_prefill && threshold > 0 && r.spec.prompt_tokens > threshold;
}

bool Scheduler::IsLongPrefill(const Request& r) const { return IsLongPrompt(r) && r.in_prefill(); }

std::int64_t Scheduler::CapLongPrefill(const Request& r, std::int64_t num_new) const {
  if (!IsLongPrefill(r)) {
    return num_new;
  }
  return std::min<std::int64_t>(num_new, config_.long_prefill_chunk_tokens());
}

void Scheduler::TopUpLongPrefills() {
  if (!waiting_.empty()) {
    return;  // someone waits (for KV, a slot or the long-prefill slot): keep the pool for them
  }
  for (std::size_t k = 0; k < planned_.size() && budget_tokens_ > 0; ++k) {
    Request* r = planned_[k];
    ScheduledSeq& s = plan_.seqs[k];
    if (!IsLongPrefill(*r)) {
      continue;
    }
    const std::int64_t left = r->num_tokens() - r->num_computed_tokens - s.num_new_tokens;
    const std::int64_t extra = std::min<std::int64_t>(left, budget_tokens_);
    const std::int64_t target = r->num_computed_tokens + s.num_new_tokens + extra;
    // Only from blocks nobody running is about to need (a block of headroom per running
    // sequence): a long prompt that takes the pool sooner makes the decodes preempt sooner.
    const std::int64_t needed =
        blocks_->BlocksFor(target) - static_cast<std::int64_t>(r->blocks.size());
    if (extra <= 0 || blocks_->num_free() - needed < static_cast<std::int64_t>(running_.size()) ||
        !blocks_->Grow(r->blocks, target)) {
      continue;  // no preemption for a top-up
    }
    s.num_new_tokens += static_cast<std::int32_t>(extra);
    s.samples_token = r->num_computed_tokens + s.num_new_tokens == r->num_tokens();
    plan_.num_prefill_tokens += extra;
    budget_tokens_ -= static_cast<std::int32_t>(extra);
  }
}

void Scheduler::ScheduleRunning(Seconds now, StepEvents* events, bool* preempted_any) {
  std::size_t i = 0;
  while (i < running_.size() && budget_tokens_ > 0) {
    Request* r = running_[i];
    const bool long_prefill = IsLongPrefill(*r);
    if (long_prefill && long_prefills_planned_ >= config_.max_long_partial_prefills) {
      ++i;  // another long prompt has this step's long-prefill slot
      continue;
    }
    std::int64_t num_new = CapLongPrefill(*r, r->num_tokens() - r->num_computed_tokens);
    if (num_new > budget_tokens_) {
      if (!config_.enable_chunked_prefill) {
        ++i;
        continue;
      }
      num_new = budget_tokens_;
    }
    bool self_preempted = false;
    while (!blocks_->Grow(r->blocks, r->num_computed_tokens + num_new)) {
      // vLLM's rule over the whole running batch: lowest priority, then latest arrival. A
      // victim already planned this step is taken out of the plan and its budget returned.
      *preempted_any = true;
      const std::size_t victim = VictimIndex();
      Preempt(victim, events);
      if (victim == i) {
        self_preempted = true;
        break;
      }
      if (victim < i) {
        --i;
      }
    }
    if (self_preempted) {
      continue;  // running_[i] is now the next request
    }
    long_prefills_planned_ += long_prefill ? 1 : 0;
    Plan(r, static_cast<std::int32_t>(num_new), now);
    ++i;
  }
}

void Scheduler::DropExpired(Seconds now, StepEvents* events) {
  while (!deadlines_.empty() && deadlines_.begin()->first < now) {
    Request* r = &requests_.find(deadlines_.begin()->second)->second;
    EraseWaiting(waiting_.find({r->queue_key, r->spec.id}), *r);
    Retire(r, FinishReason::kDeadline, now, events);
  }
}

bool Scheduler::NeverFits(const Request& r) const {
  const std::int64_t tokens = r.num_tokens();
  if (!config_.enable_chunked_prefill && tokens > config_.max_num_batched_tokens) {
    return true;
  }
  return blocks_->BlocksFor(tokens) > blocks_->num_total();
}

void Scheduler::ScheduleWaiting(Seconds now, StepEvents* events) {
  std::int64_t reserved = config_.reserve_prefill_blocks ? ReservedPrefillBlocks() : 0;
  // The first prompt blocked past its bypass steps gets the guarantee; those behind it wait
  // their turn (one shadow a step, O(running log running)).
  bool head_blocked = false;
  std::optional<Backfill> backfill;
  auto it = waiting_.begin();
  while (it != waiting_.end() && budget_tokens_ > 0) {
    Request* r = &requests_.find(it->second)->second;
    // Prefix caching: the blocks the cache holds for its prompt now are not computed again.
    const std::int32_t cached_blocks = CachedPrefixBlocks(r);
    const std::int64_t cached_tokens = std::int64_t{cached_blocks} * blocks_->block_size();
    const std::int64_t tokens = r->num_tokens() - cached_tokens;
    if (NeverFits(*r)) {
      // Waiting would wedge the queue: fail it now (a recompute that outgrew the step, or a
      // prompt longer than the engine can ever hold).
      it = EraseWaiting(it, *r);
      Retire(r, r->num_preemptions > 0 ? FinishReason::kPreemptionLimit : FinishReason::kRejected,
             now, events);
      continue;
    }
    const bool long_prefill = IsLongPrefill(*r);
    if (long_prefill && long_prefills_planned_ >= config_.max_long_partial_prefills) {
      ++it;  // the long-prefill slot is taken this step: schedule the requests behind it
      continue;
    }
    std::int64_t num_new = CapLongPrefill(*r, tokens);
    if (num_new > budget_tokens_) {
      if (!config_.enable_chunked_prefill) {
        break;
      }
      num_new = budget_tokens_;
    }
    if (config_.reserve_prefill_blocks) {
      const std::int64_t need = BlocksToAdmit(tokens, num_new);
      if (need > blocks_->num_free() - reserved) {
        if (tokens <= num_new) {
          break;  // FCFS: nothing behind it goes first
        }
        // A prompt of several steps that would run out of blocks mid-prefill waits until its
        // whole prefill fits. Requests behind it pass it only when they do not delay it
        // (backfill), after max_prefill_bypass_steps in which any that fit may.
        if (++r->num_blocked_steps > config_.max_prefill_bypass_steps && !head_blocked) {
          head_blocked = true;
          backfill = Shadow(tokens, num_new, reserved);
          if (!backfill) {
            reserved += need;  // no finish frees enough: keep every free block for it
          }
        }
        ++it;
        continue;
      }
      if (backfill && !MayBackfill(*r, num_new, &*backfill)) {
        ++it;  // it would delay the blocked prompt: requests behind it may not
        continue;
      }
    }
    if (static_cast<std::int32_t>(running_.size()) >= config_.max_num_seqs &&
        !Displace(*r, cached_tokens + num_new, events)) {
      break;
    }
    if (!blocks_->AcquireAndGrow(r->blocks,
                                 std::span<const std::uint64_t>(r->block_hashes)
                                     .first(static_cast<std::size_t>(cached_blocks)),
                                 cached_blocks, cached_tokens + num_new)) {
      break;
    }
    long_prefills_planned_ += long_prefill ? 1 : 0;
    it = EraseWaiting(it, *r);
    StartFromCache(r, cached_tokens);
    r->state = RequestState::kRunning;
    running_.push_back(r);
    if (config_.reserve_prefill_blocks) {
      reserved += blocks_->BlocksFor(r->num_tokens()) - static_cast<std::int64_t>(r->blocks.size());
    }
    CountRunningPrefill(*r, +1);
    Plan(r, static_cast<std::int32_t>(num_new), now);
  }
}

void Scheduler::OnStepDone(const StepResult& result, Seconds now, StepEvents* events) {
  now_ = now;
  std::size_t token_index = 0;
  for (std::size_t k = 0; k < planned_.size(); ++k) {
    Request* r = planned_[k];
    const ScheduledSeq& s = plan_.seqs[k];
    CountRunningPrefill(*r, -1);
    r->num_computed_tokens += s.num_new_tokens;
    RegisterFullBlocks(r);
    if (s.samples_token) {
      SPILLWAY_CHECK(token_index < result.token_ids.size());
      const std::int32_t token = result.token_ids[token_index++];
      events->tokens.push_back({r->spec.id, token, r->num_output_tokens});
      ++r->num_output_tokens;
      if (r->first_token_s == kNever) {
        r->first_token_s = now;
      }
      r->last_token_s = now;
    }
    CountRunningPrefill(*r, +1);
    if (Finishes(*r)) {
      finishing_.push_back(r);  // retired below, after the scan
    }
  }
  planned_.clear();
  plan_.clear();
  if (finishing_.empty()) {
    return;
  }
  // Retire finished requests in one pass over running_ (keeps running order). An abort or
  // stop requested during the step loses to the natural finish.
  for (Request* r : finishing_) {
    r->pending_finish = FinishReason::kNone;
  }
  std::sort(finishing_.begin(), finishing_.end(), std::less<Request*>());
  const auto finishing = [this](Request* r) {
    return std::binary_search(finishing_.begin(), finishing_.end(), r, std::less<Request*>());
  };
  pending_finish_.erase(std::remove_if(pending_finish_.begin(), pending_finish_.end(), finishing),
                        pending_finish_.end());
  std::vector<Request*> keep;
  keep.reserve(running_.size());
  for (Request* r : running_) {
    if (!finishing(r)) {
      keep.push_back(r);
      continue;
    }
    // EOS (the emulated model's) before the cap is a stop, as vLLM checks EOS first.
    const bool eos = r->spec.emulated_output_tokens > 0 &&
                     r->num_output_tokens >= r->spec.emulated_output_tokens;
    Retire(r, eos ? FinishReason::kStop : FinishReason::kLength, now, events);
  }
  running_.swap(keep);
  finishing_.clear();
}

}  // namespace spillway
