#include "kv/block_manager.h"

#include <algorithm>
#include <numeric>

#include "core/check.h"

namespace spillway {

BlockManager::BlockManager(std::int32_t num_blocks, std::int32_t block_size, bool prefix_caching)
    : block_size_(block_size),
      num_total_(num_blocks),
      prefix_caching_(prefix_caching),
      ref_(static_cast<std::size_t>(num_blocks), 0),
      hash_(static_cast<std::size_t>(num_blocks), 0) {
  SPILLWAY_CHECK(num_blocks > 0 && block_size > 0);
  free_.resize(static_cast<std::size_t>(num_blocks));
  // Lowest ids on top of the stack, so allocation order is easy to read in tests.
  std::iota(free_.rbegin(), free_.rend(), 0);
  if (prefix_caching_) {
    prev_.assign(static_cast<std::size_t>(num_blocks), kNone);
    next_.assign(static_cast<std::size_t>(num_blocks), kNone);
  }
}

BlockManager::BlockManager(const BlockManager& real, Counting)
    : block_size_(real.block_size_),
      num_total_(real.num_total_),
      prefix_caching_(real.prefix_caching_),
      real_(real.counting() ? real.real_ : &real),
      view_free_(real.num_free()),
      view_fresh_(real.counting() ? real.view_fresh_
                                  : static_cast<std::int32_t>(real.free_.size())),
      view_evicting_(real.counting() && real.view_evicting_) {
  if (real.counting()) {
    view_refs_ = real.view_refs_;
  }
}

std::int32_t BlockManager::ViewRefs(std::int32_t block) const {
  const auto it = view_refs_.find(block);
  return it != view_refs_.end() ? it->second : real_->ref_[static_cast<std::size_t>(block)];
}

std::int32_t BlockManager::num_free() const {
  if (counting()) {
    return view_free_;
  }
  return static_cast<std::int32_t>(free_.size()) + num_evictable_;
}

std::int32_t BlockManager::ref_count(std::int32_t block) const {
  if (block < 0 || block >= num_total_) {
    return 0;
  }
  return counting() ? ViewRefs(block) : ref_[static_cast<std::size_t>(block)];
}

std::int32_t BlockManager::GrowthNeeded(const std::vector<std::int32_t>& table,
                                        std::int64_t tokens) const {
  const std::int32_t need = BlocksFor(tokens) - static_cast<std::int32_t>(table.size());
  return need > 0 ? need : 0;
}

void BlockManager::PushEvictable(std::int32_t block) {
  const auto b = static_cast<std::size_t>(block);
  prev_[b] = tail_;
  next_[b] = kNone;
  if (tail_ != kNone) {
    next_[static_cast<std::size_t>(tail_)] = block;
  } else {
    head_ = block;
  }
  tail_ = block;
  ++num_evictable_;
}

void BlockManager::UnlinkEvictable(std::int32_t block) {
  const auto b = static_cast<std::size_t>(block);
  (prev_[b] != kNone ? next_[static_cast<std::size_t>(prev_[b])] : head_) = next_[b];
  (next_[b] != kNone ? prev_[static_cast<std::size_t>(next_[b])] : tail_) = prev_[b];
  prev_[b] = kNone;
  next_[b] = kNone;
  --num_evictable_;
}

std::int32_t BlockManager::TakeFreeBlock() {
  std::int32_t block = kNone;
  if (!free_.empty()) {
    block = free_.back();
    free_.pop_back();
  } else {
    // Evict the least recently released cached block: its tokens are forgotten.
    SPILLWAY_CHECK(head_ != kNone);
    block = head_;
    UnlinkEvictable(block);
    index_.erase(hash_[static_cast<std::size_t>(block)]);
    hash_[static_cast<std::size_t>(block)] = 0;
  }
  SPILLWAY_CHECK(ref_[static_cast<std::size_t>(block)] == 0);
  ref_[static_cast<std::size_t>(block)] = 1;
  return block;
}

bool BlockManager::Grow(std::vector<std::int32_t>& table, std::int64_t tokens) {
  const std::int32_t need = GrowthNeeded(table, tokens);
  if (need > num_free()) {
    return false;
  }
  if (counting()) {
    TakeViewBlocks(need);
    table.insert(table.end(), static_cast<std::size_t>(need), kNone);
    return true;
  }
  for (std::int32_t i = 0; i < need; ++i) {
    table.push_back(TakeFreeBlock());
  }
  return true;
}

void BlockManager::TakeViewBlocks(std::int32_t n) {
  view_free_ -= n;
  const std::int32_t fresh = std::min(n, view_fresh_);
  view_fresh_ -= fresh;
  view_evicting_ = view_evicting_ || n > fresh;
}

std::int32_t BlockManager::Lookup(std::uint64_t hash) const {
  const auto it = index_.find(hash);
  return it == index_.end() ? kNone : it->second;
}

std::int32_t BlockManager::MatchPrefix(std::span<const std::uint64_t> hashes) const {
  if (!prefix_caching_) {
    return 0;
  }
  std::int32_t hits = 0;
  for (const std::uint64_t hash : hashes) {
    const std::int32_t block = counting() ? real_->Lookup(hash) : Lookup(hash);
    // A view that has begun to evict keeps only the cached blocks some table references.
    if (block == kNone || (counting() && view_evicting_ && ViewRefs(block) == 0)) {
      break;
    }
    ++hits;
  }
  return hits;
}

bool BlockManager::AcquireAndGrow(std::vector<std::int32_t>& table,
                                  std::span<const std::uint64_t> hashes, std::int32_t num_cached,
                                  std::int64_t tokens) {
  SPILLWAY_CHECK(table.empty() && num_cached >= 0 &&
                 num_cached <= static_cast<std::int32_t>(hashes.size()));
  const std::int32_t fresh = std::max(0, BlocksFor(tokens) - num_cached);
  if (counting()) {
    return ViewAcquireAndGrow(table, hashes, num_cached, fresh);
  }
  std::int32_t revived = 0;  // cached blocks taken off the evictable list
  for (std::int32_t i = 0; i < num_cached; ++i) {
    const std::int32_t block = Lookup(hashes[static_cast<std::size_t>(i)]);
    SPILLWAY_CHECK(block != kNone);
    revived += ref_[static_cast<std::size_t>(block)] == 0 ? 1 : 0;
  }
  if (fresh + revived > num_free()) {
    return false;
  }
  for (std::int32_t i = 0; i < num_cached; ++i) {
    const std::int32_t block = Lookup(hashes[static_cast<std::size_t>(i)]);
    if (ref_[static_cast<std::size_t>(block)]++ == 0) {
      UnlinkEvictable(block);
    }
    table.push_back(block);
  }
  for (std::int32_t i = 0; i < fresh; ++i) {
    table.push_back(TakeFreeBlock());
  }
  return true;
}

bool BlockManager::ViewAcquireAndGrow(std::vector<std::int32_t>& table,
                                      std::span<const std::uint64_t> hashes,
                                      std::int32_t num_cached, std::int32_t fresh) {
  std::int32_t revived = 0;
  for (std::int32_t i = 0; i < num_cached; ++i) {
    revived += ViewRefs(real_->Lookup(hashes[static_cast<std::size_t>(i)])) == 0 ? 1 : 0;
  }
  if (fresh + revived > view_free_) {
    return false;
  }
  view_free_ -= revived;
  for (std::int32_t i = 0; i < num_cached; ++i) {
    const std::int32_t block = real_->Lookup(hashes[static_cast<std::size_t>(i)]);
    view_refs_[block] = ViewRefs(block) + 1;
    table.push_back(block);
  }
  TakeViewBlocks(fresh);
  table.insert(table.end(), static_cast<std::size_t>(fresh), kNone);
  return true;
}

void BlockManager::ViewRelease(std::vector<std::int32_t>& table) {
  for (const std::int32_t block : table) {
    if (block == kNone) {  // made by the view: free again
      ++view_free_;
      ++view_fresh_;
      continue;
    }
    if (real_->hash_[static_cast<std::size_t>(block)] == 0) {
      ++view_free_;  // an uncached block has one table, its own: never cached, free again
      ++view_fresh_;
      continue;
    }
    const std::int32_t refs = ViewRefs(block) - 1;
    view_refs_[block] = refs;
    view_free_ += refs == 0 ? 1 : 0;  // cached and evictable: free to allocate
  }
  table.clear();
}

void BlockManager::Release(std::vector<std::int32_t>& table) {
  if (counting()) {
    ViewRelease(table);
    return;
  }
  // The table's last blocks (the least shared) are the first to be evicted, as in vLLM.
  for (auto it = table.rbegin(); it != table.rend(); ++it) {
    const std::int32_t block = *it;
    const auto b = static_cast<std::size_t>(block);
    SPILLWAY_CHECK(block >= 0 && block < num_total_ && ref_[b] > 0);
    if (--ref_[b] > 0) {
      continue;
    }
    if (hash_[b] != 0) {
      PushEvictable(block);
    } else {
      free_.push_back(block);
    }
  }
  table.clear();
}

std::int32_t BlockManager::BlocksFreedByRelease(const std::vector<std::int32_t>& table) const {
  std::int32_t freed = 0;
  for (const std::int32_t block : table) {
    freed += OnlyOneHolder(block) ? 1 : 0;
  }
  return freed;
}

void BlockManager::Register(std::int32_t block, std::uint64_t hash) {
  if (!prefix_caching_ || counting()) {
    return;
  }
  const auto b = static_cast<std::size_t>(block);
  SPILLWAY_CHECK(block >= 0 && block < num_total_ && ref_[b] > 0 && hash != 0);
  if (hash_[b] != 0) {
    return;  // already named (a block taken from the cache)
  }
  if (index_.try_emplace(hash, block).second) {
    hash_[b] = hash;
  }
}

bool BlockManager::CheckInvariants(std::string* error) const {
  if (counting()) {
    return true;
  }
  const auto fail = [error](std::string why) {
    *error = std::move(why);
    return false;
  };
  std::vector<char> seen(static_cast<std::size_t>(num_total_), 0);
  for (const std::int32_t block : free_) {
    if (block < 0 || block >= num_total_) {
      return fail("free list holds out-of-range block " + std::to_string(block));
    }
    const auto b = static_cast<std::size_t>(block);
    if (seen[b]++ != 0) {
      return fail("block " + std::to_string(block) + " is on the free list twice");
    }
    if (ref_[b] != 0 || hash_[b] != 0) {
      return fail("block " + std::to_string(block) + " is free and referenced or cached");
    }
  }
  std::int32_t evictable = 0;
  for (std::int32_t block = head_; block != kNone; block = next_[static_cast<std::size_t>(block)]) {
    const auto b = static_cast<std::size_t>(block);
    if (seen[b]++ != 0 || ++evictable > num_evictable_) {
      return fail("block " + std::to_string(block) + " is free or evictable twice");
    }
    if (ref_[b] != 0 || hash_[b] == 0) {
      return fail("evictable block " + std::to_string(block) + " is referenced or not cached");
    }
  }
  if (evictable != num_evictable_) {
    return fail("the evictable list holds " + std::to_string(evictable) + " blocks, counted " +
                std::to_string(num_evictable_));
  }
  std::int32_t referenced = 0;
  std::size_t hashed = 0;
  for (std::size_t b = 0; b < ref_.size(); ++b) {
    if (seen[b] == 0 && ref_[b] <= 0) {
      return fail("block " + std::to_string(b) + " is neither free, evictable nor referenced");
    }
    referenced += ref_[b] > 0 ? 1 : 0;
    if (hash_[b] != 0) {
      ++hashed;
      if (Lookup(hash_[b]) != static_cast<std::int32_t>(b)) {
        return fail("block " + std::to_string(b) + "'s hash is not indexed to it");
      }
    }
  }
  if (hashed != index_.size()) {
    return fail("the hash index names " + std::to_string(index_.size()) + " blocks, " +
                std::to_string(hashed) + " hold a hash");
  }
  if (referenced + num_free() != num_total_) {
    return fail("free (" + std::to_string(num_free()) + ") + allocated (" +
                std::to_string(referenced) + ") != total (" + std::to_string(num_total_) + ")");
  }
  return true;
}

}  // namespace spillway
