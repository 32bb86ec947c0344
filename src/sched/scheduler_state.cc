// The scheduler's read-only views of its own state: the gauges admission and /metrics read
// (stats, StatsAhead) and the invariant check the tests and the simulator run after each event.

#include <string>

#include "sched/scheduler.h"

namespace spillway {

EngineStats Scheduler::stats() const {
  EngineStats s;
  s.num_waiting = num_waiting();
  s.num_running = num_running();
  s.waiting_prompt_tokens = waiting_prompt_tokens_;
  s.prefill_backlog_tokens = waiting_prompt_tokens_ + running_prefill_tokens_;
  s.long_prefill_backlog_tokens = long_waiting_tokens_ + long_running_prefill_tokens_;
  s.kv_usage = blocks_->usage();
  s.num_free_blocks = blocks_->num_free();
  s.num_total_blocks = blocks_->num_total();
  s.block_size = blocks_->block_size();
  s.num_preemptions_total = num_preemptions_total_;
  s.num_recomputed_tokens_total = num_recomputed_tokens_total_;
  s.prefix_cache_queries_total = prefix_cache_queries_total_;
  s.prefix_cache_hits_total = prefix_cache_hits_total_;
  s.num_cached_blocks = blocks_->num_cached();
  s.max_num_seqs = config_.max_num_seqs;
  return s;
}

EngineStats Scheduler::StatsAhead(std::int32_t priority, Seconds now) const {
  EngineStats s = stats();
  if (config_.policy != SchedulingPolicy::kPriority) {
    return s;  // FCFS: a new request queues behind every waiting one
  }
  RequestSpec probe;
  probe.arrival_s = now;
  probe.priority = priority;
  const double key = QueueKey(probe);
  std::int32_t ahead = 0;
  std::int64_t tokens = 0;
  std::int64_t long_tokens = 0;
  for (auto it = waiting_.begin(); it != waiting_.end() && it->first <= key; ++it) {
    const Request& r = requests_.at(it->second);
    ++ahead;
    tokens += WaitingPrefillTokens(r);
    long_tokens += IsLongPrompt(r) ? WaitingPrefillTokens(r) : 0;
  }
  s.num_waiting_ahead = ahead;
  s.prefill_backlog_ahead_tokens = tokens + running_prefill_tokens_;
  s.long_prefill_backlog_ahead_tokens = long_tokens + long_running_prefill_tokens_;
  return s;
}

bool Scheduler::CheckInvariants(std::string* error) const {
  if (!blocks_->CheckInvariants(error)) {
    return false;
  }
  auto fail = [&](const std::string& why) {
    *error = why;
    return false;
  };
  if (running_.size() > static_cast<std::size_t>(config_.max_num_seqs)) {
    return fail("running exceeds max_num_seqs");
  }
  std::vector<std::int32_t> references(static_cast<std::size_t>(blocks_->num_total()), 0);
  std::int64_t prefill = 0;
  std::int64_t long_prefill = 0;
  for (const Request* r : running_) {
    if (r->state != RequestState::kRunning) {
      return fail("request " + std::to_string(r->spec.id) + " in running list is " +
                  std::string(ToString(r->state)));
    }
    for (const std::int32_t block : r->blocks) {
      if (block < 0 || block >= blocks_->num_total()) {
        return fail("request " + std::to_string(r->spec.id) + " holds no block " +
                    std::to_string(block));
      }
      ++references[static_cast<std::size_t>(block)];
    }
    if (r->blocks.size() < static_cast<std::size_t>(blocks_->BlocksFor(r->num_computed_tokens))) {
      return fail("request " + std::to_string(r->spec.id) + " has KV without blocks");
    }
    if (r->num_computed_tokens > r->num_tokens()) {
      return fail("request " + std::to_string(r->spec.id) + " computed more than it has");
    }
    prefill += PrefillRemaining(*r);
    long_prefill += IsLongPrompt(*r) ? PrefillRemaining(*r) : 0;
  }
  std::int32_t held = 0;
  for (std::int32_t block = 0; block < blocks_->num_total(); ++block) {
    const std::int32_t n = references[static_cast<std::size_t>(block)];
    if (n != blocks_->ref_count(block)) {
      return fail("block " + std::to_string(block) + " is referenced " +
                  std::to_string(blocks_->ref_count(block)) + " times, held by " +
                  std::to_string(n) + " running requests");
    }
    held += n > 0 ? 1 : 0;
  }
  if (held != blocks_->num_allocated()) {
    return fail("allocated blocks (" + std::to_string(blocks_->num_allocated()) +
                ") != blocks held by running requests (" + std::to_string(held) + ")");
  }
  if (prefix_cache_hits_total_ > prefix_cache_queries_total_) {
    return fail("more prefix-cache hits than queries");
  }
  std::int64_t waiting_tokens = 0;
  std::int64_t long_waiting_tokens = 0;
  std::size_t with_deadline = 0;
  for (const auto& [key, id] : waiting_) {
    const auto it = requests_.find(id);
    if (it == requests_.end()) {
      return fail("waiting queue holds unknown request " + std::to_string(id));
    }
    const Request& r = it->second;
    if (!r.blocks.empty() || r.num_computed_tokens != 0) {
      return fail("waiting request " + std::to_string(id) + " holds KV blocks");
    }
    if (r.num_cached_tokens < 0 || r.num_cached_tokens >= r.num_tokens()) {
      return fail("waiting request " + std::to_string(id) +
                  " counts a cached prefix it cannot have");
    }
    waiting_tokens += WaitingPrefillTokens(r);
    long_waiting_tokens += IsLongPrompt(r) ? WaitingPrefillTokens(r) : 0;
    if (!r.ever_scheduled() && r.spec.deadline_s != kNever) {
      ++with_deadline;
      if (!deadlines_.contains({r.spec.deadline_s, id})) {
        return fail("waiting request " + std::to_string(id) + " missing from the deadline index");
      }
    }
  }
  if (with_deadline != deadlines_.size()) {
    return fail("the deadline index holds requests that are not waiting");
  }
  if (waiting_.size() + running_.size() != requests_.size()) {
    return fail("a live request is neither waiting nor running");
  }
  if (waiting_tokens != waiting_prompt_tokens_ || prefill != running_prefill_tokens_ ||
      long_waiting_tokens != long_waiting_tokens_ || long_prefill != long_running_prefill_tokens_) {
    return fail("token counters disagree with the queues");
  }
  return true;
}

}  // namespace spillway
