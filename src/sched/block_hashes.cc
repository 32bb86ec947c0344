#include "sched/block_hashes.h"

#include <algorithm>
#include <memory>
#include <span>

namespace spillway {
namespace {

// splitmix64's finaliser: a bijective 64-bit mix.
std::uint64_t Mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::uint64_t Combine(std::uint64_t h, std::uint64_t v) { return Mix(h ^ Mix(v)); }

constexpr std::uint64_t kRoot = 0x5350494C4C574159ULL;  // the chain's parent of block 0
constexpr std::uint64_t kOwnTokens = 0xA5A5A5A5A5A5A5A5ULL;

}  // namespace

void ExtendBlockHashes(const RequestSpec& spec, std::int32_t block_size, std::int64_t num_blocks,
                       std::vector<std::uint64_t>* hashes) {
  const PromptSegments* segments = spec.prompt_segments.get();
  const std::int64_t seg = segments != nullptr ? segments->segment_tokens : 0;
  // Tokens the segments name: never past the prompt (outputs are the request's own).
  const std::int64_t covered =
      seg > 0 ? std::min<std::int64_t>(spec.prompt_tokens,
                                       seg * static_cast<std::int64_t>(segments->ids.size()))
              : 0;
  for (auto j = static_cast<std::int64_t>(hashes->size()); j < num_blocks; ++j) {
    std::uint64_t h =
        Combine(hashes->empty() ? kRoot : hashes->back(), static_cast<std::uint64_t>(j));
    const std::int64_t begin = j * block_size;
    const std::int64_t end = begin + block_size;
    for (std::int64_t s = begin / std::max<std::int64_t>(seg, 1);
         seg > 0 && s * seg < std::min(end, covered); ++s) {
      h = Combine(h, segments->ids[static_cast<std::size_t>(s)]);
    }
    if (end > covered) {
      h = Combine(Combine(h, kOwnTokens), spec.id);
    }
    hashes->push_back(h == 0 ? 1 : h);
  }
}

std::int32_t CachedPrefixBlocks(const BlockManager& blocks, const RequestSpec& spec,
                                std::int64_t num_tokens, std::vector<std::uint64_t>* hashes) {
  if (!blocks.prefix_caching()) {
    return 0;
  }
  const std::int64_t usable = (num_tokens - 1) / blocks.block_size();
  ExtendBlockHashes(spec, blocks.block_size(), usable, hashes);
  return blocks.MatchPrefix(
      std::span<const std::uint64_t>(*hashes).first(static_cast<std::size_t>(usable)));
}

std::vector<std::uint64_t> SharedPrefixBlockHashes(
    const std::shared_ptr<const PromptSegments>& segments, std::int64_t prompt_tokens,
    std::int32_t block_size, std::int32_t max_blocks) {
  std::vector<std::uint64_t> hashes;
  if (segments == nullptr || block_size <= 0 || segments->segment_tokens <= 0 || max_blocks <= 0) {
    return hashes;
  }
  const std::int64_t covered =
      std::min<std::int64_t>(prompt_tokens, static_cast<std::int64_t>(segments->segment_tokens) *
                                                static_cast<std::int64_t>(segments->ids.size()));
  RequestSpec spec;  // the id never enters a block wholly inside the segments
  spec.prompt_tokens = prompt_tokens;
  spec.prompt_segments = segments;
  ExtendBlockHashes(spec, block_size, std::min<std::int64_t>(covered / block_size, max_blocks),
                    &hashes);
  return hashes;
}

}  // namespace spillway
