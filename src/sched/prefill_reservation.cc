// The KV blocks a prompt of several steps needs before it is admitted
// (SchedulerConfig::reserve_prefill_blocks), and the backfill rule that lets requests pass a
// prompt blocked for want of them without delaying its start (max_prefill_bypass_steps).

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "sched/scheduler.h"

namespace spillway {
namespace {

std::int64_t CeilDiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Blocks each running decode grows into while a prompt with `tokens` to prefill takes
// `num_new` a step: one per block_size steps.
std::int64_t GrowthPerSeq(std::int64_t tokens, std::int64_t num_new, std::int64_t block_size) {
  return CeilDiv(CeilDiv(tokens, num_new), block_size);
}

}  // namespace

std::int64_t Scheduler::ReservedPrefillBlocks() const {
  std::int64_t reserved = 0;
  for (const Request* r : running_) {
    if (r->in_prefill()) {
      reserved += std::max<std::int64_t>(
          0, blocks_->BlocksFor(r->num_tokens()) - static_cast<std::int64_t>(r->blocks.size()));
    }
  }
  return reserved;
}

std::int64_t Scheduler::BlocksToAdmit(std::int64_t tokens, std::int64_t num_new) const {
  if (tokens <= num_new) {
    return blocks_->BlocksFor(num_new);  // prefilled within this step
  }
  // Its whole prefill, and the blocks the running decodes grow into meanwhile (a block each
  // per block_size steps of it).
  return blocks_->BlocksFor(tokens) + GrowthPerSeq(tokens, num_new, blocks_->block_size()) *
                                          static_cast<std::int64_t>(running_.size());
}

std::int64_t Scheduler::StepsToFinish(const Request& r, std::int64_t chunk) const {
  const std::int64_t prefill = PrefillRemaining(r);
  const std::int64_t outputs = r.spec.max_output_tokens - r.num_output_tokens;
  if (prefill == 0) {
    return outputs;  // one token a step
  }
  // The prefill's last step samples the first of the outputs left.
  return CeilDiv(prefill, std::max<std::int64_t>(1, chunk)) + outputs - 1;
}

std::optional<Scheduler::Backfill> Scheduler::Shadow(std::int64_t tokens, std::int64_t num_new,
                                                     std::int64_t reserved) const {
  struct Finish {
    std::int64_t step;
    std::int64_t blocks;    // freed then: those held, and those its unfinished prompt will take
    std::int32_t requests;  // 1 for a request's finish, 0 for a shared block's last holder's
  };
  std::vector<Finish> finishes;
  finishes.reserve(running_.size());
  // A block shared by running requests (a cached prefix) is freed by the last of them to
  // finish, and only when no one else holds it: its latest finish and its running holders.
  struct SharedBlock {
    std::int64_t step = 0;
    std::int32_t holders = 0;
  };
  std::unordered_map<std::int32_t, SharedBlock> shared;
  for (const Request* r : running_) {
    const std::int64_t chunk = CapLongPrefill(*r, config_.max_num_batched_tokens);
    const std::int64_t step = StepsToFinish(*r, chunk);
    std::int64_t own = static_cast<std::int64_t>(r->blocks.size());
    if (blocks_->prefix_caching()) {  // without it no block is shared
      for (const std::int32_t block : r->blocks) {
        if (!blocks_->OnlyOneHolder(block)) {
          --own;
          SharedBlock& b = shared[block];
          b.step = std::max(b.step, step);
          ++b.holders;
        }
      }
    }
    // Its own blocks, and those its unfinished prompt will take.
    const std::int64_t to_come = std::max<std::int64_t>(
        0, blocks_->BlocksFor(r->num_tokens()) - static_cast<std::int64_t>(r->blocks.size()));
    finishes.push_back({step, own + to_come, 1});
  }
  for (const auto& [block, b] : shared) {
    if (b.holders == blocks_->ref_count(block)) {
      finishes.push_back({b.step, 1, 0});
    }
  }
  // At the same step a request's finish comes before the shared blocks it was the last to
  // hold (without shared blocks: plain step order, as before).
  std::sort(finishes.begin(), finishes.end(), [](const Finish& a, const Finish& b) {
    return a.step < b.step || (a.step == b.step && a.requests > b.requests);
  });
  const std::int64_t block_size = blocks_->block_size();
  const std::int64_t growth_per_seq = GrowthPerSeq(tokens, num_new, block_size);
  std::int64_t free_then = blocks_->num_free() - reserved;
  std::int64_t still_running = static_cast<std::int64_t>(running_.size());
  for (const Finish& finish : finishes) {
    free_then += finish.blocks;
    still_running -= finish.requests;
    const std::int64_t t = finish.step;
    // Those still running have grown by a block per block_size steps each, and keep growing
    // during its prefill (BlocksToAdmit).
    const std::int64_t grown = still_running * CeilDiv(t, block_size);
    const std::int64_t need = blocks_->BlocksFor(tokens) + growth_per_seq * still_running;
    if (free_then - grown >= need) {
      return Backfill{t, free_then - grown - need};
    }
  }
  return std::nullopt;
}

bool Scheduler::MayBackfill(const Request& r, std::int64_t num_new, Backfill* backfill) const {
  if (StepsToFinish(r, num_new) <= backfill->shadow_steps) {
    return true;  // gone, its blocks freed, before the blocked prompt can start
  }
  const std::int64_t blocks_at_finish = blocks_->BlocksFor(
      static_cast<std::int64_t>(r.spec.prompt_tokens) + r.spec.max_output_tokens);
  if (blocks_at_finish > backfill->surplus_blocks) {
    return false;
  }
  backfill->surplus_blocks -= blocks_at_finish;
  return true;
}

}  // namespace spillway
