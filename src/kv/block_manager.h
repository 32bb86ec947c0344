#pragma once
// Paged KV-cache block manager (the PagedAttention block pool, Kwon et al., SOSP 2023) with
// automatic prefix caching (vLLM v1's KVCacheManager).
//
// Algorithm: a fixed pool of `num_blocks` blocks of `block_size` tokens each. A sequence holds a
// block table (a vector of block ids, kept by the sequence itself) that grows one block at a
// time as its context grows, and releases it when it finishes, is aborted, dropped or
// preempted. A block is referenced by every table that holds it.
//
// Prefix caching (when enabled): a full block's tokens are named by a hash chained over the
// tokens before it (the sequence computes it, sched/block_hashes.h) and registered here; a later
// sequence whose prompt starts with the same chain takes those blocks into its table instead of
// computing them. A block no table references any more keeps its hash and waits, evictable, in
// least-recently-released order; a new allocation takes a never-cached free block first, then
// evicts the least recently released cached one. Free blocks (num_free) include the evictable
// ones, as vLLM counts them.
//
// Invariants (CheckInvariants): every block is free (uncached, unreferenced), cached-evictable
// (hashed, unreferenced) or referenced, exactly once; a hash names at most one block and the
// index agrees with the blocks' hashes; referenced == allocated.
//
// A counting view (BlockManager(real, Counting{})) serves the engine's what-if forecasts without
// copying the pool (a copy was 12 B a block: 1.5 MB for 128k blocks, per forecast future). It
// starts from the real pool's free blocks and references; new blocks it hands out are counted,
// not tracked (their ids are -1), and a cached block's references are the real ones plus the
// view's changes, kept only for the cached blocks it touches. Prefix lookups are answered from
// the real pool's index as it was made, and only while the view has not needed more blocks
// than the never-cached free ones: from then on a real allocation would evict the least
// recently released cached blocks, so the view finds only blocks some table references. It
// does not register the blocks it computes: a prefix that two queued prompts share and neither
// has computed yet is forecast without that hit (registering them doubled the time of
// `spillway sim --scenario scenarios/mooncake.yaml --policy forecast`).
//
// Not thread-safe: owned by one engine, which is driven from one strand or the simulator.

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace spillway {

class BlockManager {
 public:
  struct Counting {};

  /// A pool of `num_blocks` (> 0) blocks of `block_size` (> 0) tokens each; prefix caching as
  /// `prefix_caching` says.
  BlockManager(std::int32_t num_blocks, std::int32_t block_size, bool prefix_caching = false);
  /// The counting view of `real` (see above); `real` must outlive it and not change meanwhile.
  BlockManager(const BlockManager& real, Counting);

  std::int32_t block_size() const { return block_size_; }
  std::int32_t num_total() const { return num_total_; }
  /// Blocks an allocation may take: never cached, or cached and evictable.
  std::int32_t num_free() const;
  std::int32_t num_allocated() const { return num_total() - num_free(); }
  /// Blocks that hold a registered hash (referenced or evictable).
  std::int32_t num_cached() const { return static_cast<std::int32_t>(index_.size()); }
  bool prefix_caching() const { return prefix_caching_; }
  bool counting() const { return real_ != nullptr; }

  /// Fraction of blocks allocated, in [0, 1] (vLLM's `kv_cache_usage_perc`, also a fraction).
  double usage() const { return static_cast<double>(num_allocated()) / num_total(); }

  /// Blocks needed to hold `tokens` tokens of context: ceil(tokens / block_size).
  std::int32_t BlocksFor(std::int64_t tokens) const {
    return static_cast<std::int32_t>((tokens + block_size_ - 1) / block_size_);
  }

  /// Extra blocks `table` needs to cover `tokens` tokens (0 if it already does).
  std::int32_t GrowthNeeded(const std::vector<std::int32_t>& table, std::int64_t tokens) const;

  /// Grows `table` with new blocks to cover `tokens` tokens. All or nothing: when the pool has
  /// too few free blocks it returns false and changes nothing.
  bool Grow(std::vector<std::int32_t>& table, std::int64_t tokens);

  /// How many leading blocks of a prompt whose full blocks hash to `hashes` are cached (0
  /// without prefix caching). O(hits).
  std::int32_t MatchPrefix(std::span<const std::uint64_t> hashes) const;

  /// Fills the empty `table` with the first `num_cached` blocks of `hashes` (MatchPrefix must
  /// say at least that many) and grows it to cover `tokens` tokens. All or nothing: false, and
  /// nothing changed, when the free blocks do not cover the new blocks and the cached ones it
  /// takes off the evictable list.
  bool AcquireAndGrow(std::vector<std::int32_t>& table, std::span<const std::uint64_t> hashes,
                      std::int32_t num_cached, std::int64_t tokens);

  /// Drops one reference to every block of `table` and clears it; a block nobody references
  /// becomes free, or evictable when it holds a hash (the last blocks of the table first).
  void Release(std::vector<std::int32_t>& table);

  /// True when releasing the one table that holds `block` frees it: no other table references
  /// it (with prefix caching a table shares its prefix's blocks). A block a counting view made
  /// (id -1) is the view's own.
  bool OnlyOneHolder(std::int32_t block) const { return block < 0 || ref_count(block) == 1; }

  /// Blocks Release(`table`) would make free now (OnlyOneHolder). O(table).
  std::int32_t BlocksFreedByRelease(const std::vector<std::int32_t>& table) const;

  /// Names `block` (referenced, full) by `hash` so later prompts may reuse it. A no-op without
  /// prefix caching, in a counting view, or when another block already holds these tokens.
  void Register(std::int32_t block, std::uint64_t hash);

  /// Tables referencing `block` (in a counting view: real references plus the view's changes;
  /// 0 for a block the view made).
  std::int32_t ref_count(std::int32_t block) const;

  /// Checks the pool's invariants; on failure returns false and says why in `error`.
  bool CheckInvariants(std::string* error) const;

 private:
  static constexpr std::int32_t kNone = -1;

  std::int32_t TakeFreeBlock();
  void PushEvictable(std::int32_t block);
  void UnlinkEvictable(std::int32_t block);
  /// The cached block holding `hash`, or kNone.
  std::int32_t Lookup(std::uint64_t hash) const;
  // The counting view's AcquireAndGrow (with `fresh` new blocks), Release and allocation.
  bool ViewAcquireAndGrow(std::vector<std::int32_t>& table, std::span<const std::uint64_t> hashes,
                          std::int32_t num_cached, std::int32_t fresh);
  void ViewRelease(std::vector<std::int32_t>& table);
  void TakeViewBlocks(std::int32_t n);

  std::int32_t block_size_;
  std::int32_t num_total_;
  bool prefix_caching_;

  // The real pool.
  std::vector<std::int32_t> ref_;    // ref_[block] = tables referencing it
  std::vector<std::uint64_t> hash_;  // hash_[block] = its registered hash, or 0
  std::vector<std::int32_t> free_;   // stack of never-cached (or evicted) free blocks
  std::unordered_map<std::uint64_t, std::int32_t> index_;  // hash -> block
  // Evictable blocks (hashed, unreferenced), a list in release order: evict from the head.
  std::vector<std::int32_t> prev_;
  std::vector<std::int32_t> next_;
  std::int32_t head_ = kNone;
  std::int32_t tail_ = kNone;
  std::int32_t num_evictable_ = 0;

  // The counting view.
  const BlockManager* real_ = nullptr;
  std::int32_t view_free_ = 0;   // blocks an allocation may take
  std::int32_t view_fresh_ = 0;  // of those, never cached: taken before evicting
  bool view_evicting_ = false;   // the view took more than the never-cached ones
  std::unordered_map<std::int32_t, std::int32_t> view_refs_;  // cached block -> references
  /// The view's references to real block `block`.
  std::int32_t ViewRefs(std::int32_t block) const;
};

}  // namespace spillway
