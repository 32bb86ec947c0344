#include "loadgen/request_body.h"

#include <algorithm>
#include <boost/json.hpp>

namespace spillway::loadgen {
namespace json = boost::json;
namespace {

/// Mixed into a segment id to seed its tokens, so that a segment's stream is not a request's
/// own (whose seeds are scenario seed x constant + index, or a prompt id x constant).
constexpr std::uint64_t kSegmentSeedSalt = 0x5E6D'E47A'11D5'9A3BULL;

// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", 2014):
// a cheap, well-mixed 64-bit sequence, enough for token ids.
std::uint64_t SplitMix64(std::uint64_t* state) {
  std::uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// Appends `count` (>= 0) token ids of the stream seeded by `seed` to `prompt`: the same ids
/// for the same seed, a shorter count giving a prefix of a longer one.
void AppendTokenIds(std::uint64_t seed, std::int32_t count, json::array* prompt) {
  std::uint64_t state = seed;
  for (std::int32_t i = 0; i < count; ++i) {
    prompt->push_back(kFirstTokenId + static_cast<std::int64_t>(SplitMix64(&state) % kTokenIdSpan));
  }
}

/// The prompt's max(prompt_tokens, 0) token ids: the segments' tokens (cut at prompt_tokens),
/// then its own from `prompt_seed`. One SplitMix64 step a token, as for a prompt of its own:
/// the body of a 131k-token trace prompt takes 3-4 ms, mostly Boost.JSON, so segment ids are
/// not cached.
json::array PromptTokenIds(std::int32_t prompt_tokens, std::uint64_t prompt_seed,
                           const PromptSegments* segments) {
  json::array prompt;
  std::int32_t left = std::max(prompt_tokens, 0);
  prompt.reserve(static_cast<std::size_t>(left));
  if (segments != nullptr) {
    for (const std::uint64_t id : segments->ids) {
      const std::int32_t n = std::clamp(segments->segment_tokens, 0, left);
      AppendTokenIds(id ^ kSegmentSeedSalt, n, &prompt);
      left -= n;
    }
  }
  AppendTokenIds(prompt_seed, left, &prompt);
  return prompt;
}

}  // namespace

std::string CompletionBody(std::string_view model, std::int32_t prompt_tokens,
                           std::int32_t max_tokens, std::uint64_t prompt_seed, bool ignore_eos,
                           const PromptSegments* segments) {
  json::object body;
  body["model"] = model;
  body["prompt"] = PromptTokenIds(prompt_tokens, prompt_seed, segments);
  body["max_tokens"] = max_tokens;
  body["temperature"] = 0.0;
  if (ignore_eos) {
    body["ignore_eos"] = true;
  }
  body["stream"] = true;
  body["stream_options"] = json::object{{"include_usage", true}};
  return json::serialize(body);
}

}  // namespace spillway::loadgen
