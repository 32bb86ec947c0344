#pragma once
// Paged KV-cache block manager (the PagedAttention block pool, Kwon et al., SOSP 2023).
//
// Algorithm: a fixed pool of `num_blocks` blocks of `block_size` tokens each. A sequence owns a
// block table (a vector of block ids, held by the sequence itself) that grows one block at a
// time as its context grows; all blocks return to the pool when the sequence finishes, is
// aborted, dropped or preempted.
//
// Invariants (CheckInvariants): free + allocated == total; a block is either on the free list or
// owned by exactly one sequence; the free list holds no block twice.
//
// Not thread-safe: owned by one engine, which is driven from one strand or the simulator.

#include <cstdint>
#include <string>
#include <vector>

#include "core/types.h"

namespace spillway {

class BlockManager {
 public:
  /// A pool of `num_blocks` (> 0) blocks of `block_size` (> 0) tokens each.
  BlockManager(std::int32_t num_blocks, std::int32_t block_size);

  std::int32_t block_size() const { return block_size_; }
  std::int32_t num_total() const { return static_cast<std::int32_t>(owner_.size()); }
  std::int32_t num_free() const { return static_cast<std::int32_t>(free_.size()); }
  std::int32_t num_allocated() const { return num_total() - num_free(); }

  /// Fraction of blocks allocated, in [0, 1] (vLLM's `kv_cache_usage_perc`, also a fraction).
  double usage() const { return static_cast<double>(num_allocated()) / num_total(); }

  /// Blocks needed to hold `tokens` tokens of context: ceil(tokens / block_size).
  std::int32_t BlocksFor(std::int64_t tokens) const {
    return static_cast<std::int32_t>((tokens + block_size_ - 1) / block_size_);
  }

  /// Extra blocks `table` needs to cover `tokens` tokens (0 if it already does).
  std::int32_t GrowthNeeded(const std::vector<std::int32_t>& table, std::int64_t tokens) const;

  /// Grows `table`, owned by sequence `owner`, to cover `tokens` tokens. All or nothing: when
  /// the pool has too few free blocks it returns false and changes nothing.
  bool Grow(RequestId owner, std::vector<std::int32_t>& table, std::int64_t tokens);

  /// Returns every block of `table` (which `owner` must own) to the pool and clears it.
  void Release(RequestId owner, std::vector<std::int32_t>& table);

  /// Checks the pool's invariants; on failure returns false and says why in `error`.
  bool CheckInvariants(std::string* error) const;

  /// True when every block of `table` is owned by `owner` (used by the scheduler's checker).
  bool Owns(RequestId owner, const std::vector<std::int32_t>& table) const;

 private:
  static constexpr RequestId kFree = ~RequestId{0};

  std::int32_t block_size_;
  std::vector<RequestId> owner_;    // owner_[block] = owning sequence, or kFree
  std::vector<std::int32_t> free_;  // stack of free block ids
};

}  // namespace spillway
