#pragma once
// What a prompt's tokens are, for prefix caching: shared by the workload that describes prompts,
// the server that reads them, and the scheduler that hashes their KV blocks.

#include <cstdint>
#include <vector>

namespace spillway {

/// What a prompt's tokens are, as far as prefix caching can tell: its first
/// ids.size() x segment_tokens tokens are the segments `ids` names, in order, where equal ids
/// mean equal tokens (the Mooncake trace's hash_ids name 512-token segments; a class's shared
/// system prompt is one segment). Tokens past them are the request's own.
struct PromptSegments {
  std::int32_t segment_tokens = 0;  ///< > 0
  std::vector<std::uint64_t> ids;
};

}  // namespace spillway
