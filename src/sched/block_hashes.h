#pragma once
// The chained hashes that name a request's full KV blocks for prefix caching (vLLM's
// hash_block_tokens: a block's hash covers its parent's hash and its own tokens, so equal hashes
// mean equal prefixes).
//
// The emulated engine has no token ids, so a block's tokens are named by what the request says
// of them (RequestSpec::prompt_segments): a block inside the prompt's shared segments is named
// by the ids of the segments it overlaps and its index; a block that reaches past them also by
// the request's id, so it can match only the same request again (its recompute after a
// preemption, as in vLLM). Hashes are never 0 (0 means "no hash" in the block manager).

#include <cstdint>
#include <memory>
#include <vector>

#include "kv/block_manager.h"
#include "sched/request.h"

namespace spillway {

/// Extends `hashes` (the chain so far for `spec`) to name the first `num_blocks` full blocks of
/// `block_size` (> 0) tokens. Deterministic: the same spec always gives the same chain.
/// O(new blocks x segments per block).
void ExtendBlockHashes(const RequestSpec& spec, std::int32_t block_size, std::int64_t num_blocks,
                       std::vector<std::uint64_t>* hashes);

/// How many leading blocks of a request of `spec` with `num_tokens` tokens `blocks` holds
/// cached, at most all but its last token's (computed to sample from, vLLM's rule); extends
/// `hashes`, its chain so far, to those blocks. 0 without prefix caching.
std::int32_t CachedPrefixBlocks(const BlockManager& blocks, const RequestSpec& spec,
                                std::int64_t num_tokens, std::vector<std::uint64_t>* hashes);

/// The hashes of the prompt's first blocks of `block_size` (> 0) tokens that lie wholly
/// inside its shared segments (`segments`, null: none; of a prompt of `prompt_tokens` tokens), at
/// most `max_blocks`: the same hashes ExtendBlockHashes gives those blocks for any request, so a
/// gateway that hashes at the engine's block size names the blocks the engine caches. Blocks
/// past the segments are the request's own and are left out (no other request can match
/// them). Empty when no block fits.
std::vector<std::uint64_t> SharedPrefixBlockHashes(
    const std::shared_ptr<const PromptSegments>& segments, std::int64_t prompt_tokens,
    std::int32_t block_size, std::int32_t max_blocks);

}  // namespace spillway
