// The scheduler's side of prefix caching (kv/block_manager.h): what a queued prompt finds
// cached, starting a request from it, and registering the blocks a request fills.

#include "sched/block_hashes.h"
#include "sched/scheduler.h"

namespace spillway {

std::int32_t Scheduler::CachedPrefixBlocks(Request* r) const {
  return spillway::CachedPrefixBlocks(*blocks_, r->spec, r->num_tokens(), &r->block_hashes);
}

void Scheduler::StartFromCache(Request* r, std::int64_t cached_tokens) {
  if (!blocks_->prefix_caching()) {
    return;
  }
  r->num_computed_tokens = cached_tokens;
  r->num_cached_tokens = cached_tokens;
  r->num_registered_blocks = static_cast<std::int32_t>(cached_tokens / blocks_->block_size());
  prefix_cache_queries_total_ += r->num_tokens();
  prefix_cache_hits_total_ += cached_tokens;
}

void Scheduler::RegisterFullBlocks(Request* r) {
  if (!blocks_->prefix_caching()) {
    return;
  }
  const std::int64_t full = std::min<std::int64_t>(r->num_computed_tokens / blocks_->block_size(),
                                                   static_cast<std::int64_t>(r->blocks.size()));
  if (full <= r->num_registered_blocks) {
    return;
  }
  ExtendBlockHashes(r->spec, blocks_->block_size(), full, &r->block_hashes);
  for (std::int64_t j = r->num_registered_blocks; j < full; ++j) {
    blocks_->Register(r->blocks[static_cast<std::size_t>(j)],
                      r->block_hashes[static_cast<std::size_t>(j)]);
  }
  r->num_registered_blocks = static_cast<std::int32_t>(full);
}

}  // namespace spillway
