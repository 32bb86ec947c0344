// The scheduler's preemptions (scheduler.h, steps 3 and 4): the victim when a running sequence
// cannot get a KV block, a displacement for a more urgent waiting request, and taking a
// preempted request back to the queue.

#include <algorithm>

#include "sched/scheduler.h"

namespace spillway {
namespace {

// True when `a` should be preempted before `b`: lower priority (larger number), then later
// arrival, then larger id.
bool PreemptBefore(const Request& a, const Request& b) {
  if (a.spec.priority != b.spec.priority) {
    return a.spec.priority > b.spec.priority;
  }
  if (a.spec.arrival_s != b.spec.arrival_s) {
    return a.spec.arrival_s > b.spec.arrival_s;
  }
  return a.spec.id > b.spec.id;
}

}  // namespace

std::size_t Scheduler::VictimIndex() const {
  std::size_t victim = 0;
  for (std::size_t i = 1; i < running_.size(); ++i) {
    if (PreemptBefore(*running_[i], *running_[victim])) {
      victim = i;
    }
  }
  return victim;
}

void Scheduler::Unplan(Request* r) {
  for (std::size_t k = 0; k < planned_.size(); ++k) {
    if (planned_[k] != r) {
      continue;
    }
    const ScheduledSeq& s = plan_.seqs[k];
    budget_tokens_ += s.num_new_tokens;
    (s.is_decode ? plan_.num_decode_tokens : plan_.num_prefill_tokens) -= s.num_new_tokens;
    plan_.seqs.erase(plan_.seqs.begin() + static_cast<std::ptrdiff_t>(k));
    planned_.erase(planned_.begin() + static_cast<std::ptrdiff_t>(k));
    return;
  }
}

void Scheduler::Preempt(std::size_t index, StepEvents* events) {
  Request* r = running_[index];
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(index));
  Unplan(r);
  CountRunningPrefill(*r, -1);
  blocks_->Release(r->blocks);
  r->num_registered_blocks = 0;
  r->num_recomputed_tokens += r->num_computed_tokens;
  num_recomputed_tokens_total_ += r->num_computed_tokens;
  r->num_computed_tokens = 0;
  // What it computed stays cached (evictable) until the pool needs the blocks.
  r->num_cached_tokens = std::int64_t{CachedPrefixBlocks(r)} * blocks_->block_size();
  ++r->num_preemptions;
  ++num_preemptions_total_;
  r->state = RequestState::kPreempted;  // out of running_ now; Retire must not count it there
  if (config_.max_preemptions > 0 && r->num_preemptions > config_.max_preemptions) {
    Retire(r, FinishReason::kPreemptionLimit, now_, events);
    return;
  }
  EnqueueWaiting(r);
}

bool Scheduler::Displace(const Request& r, std::int64_t tokens, StepEvents* events) {
  if (config_.policy != SchedulingPolicy::kPriority || config_.max_displacements <= 0) {
    return false;
  }
  std::size_t victim = running_.size();
  for (std::size_t i = 0; i < running_.size(); ++i) {
    const Request& v = *running_[i];
    const bool queues_after = v.spec.priority > r.spec.priority && v.queue_key > r.queue_key;
    const bool may_go =
        v.num_displacements < config_.max_displacements &&
        (config_.max_preemptions == 0 || v.num_preemptions < config_.max_preemptions);
    if (queues_after && may_go &&
        (victim == running_.size() || PreemptBefore(v, *running_[victim]))) {
      victim = i;
    }
  }
  if (victim == running_.size()) {
    return false;
  }
  // Only when the victim's blocks make room for `r`'s: a displacement that still leaves it
  // waiting would cost a recompute for nothing. Blocks it shares with other running requests
  // (a cached prefix) stay taken.
  const std::int64_t needed =
      blocks_->BlocksFor(tokens) - static_cast<std::int64_t>(r.blocks.size());
  if (needed > blocks_->num_free() + blocks_->BlocksFreedByRelease(running_[victim]->blocks)) {
    return false;
  }
  ++running_[victim]->num_displacements;
  Preempt(victim, events);
  return true;
}

}  // namespace spillway
