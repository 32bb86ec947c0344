#include "loadgen/request_body.h"

#include <algorithm>
#include <boost/json.hpp>

namespace spillway::loadgen {
namespace json = boost::json;
namespace {

// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", 2014):
// a cheap, well-mixed 64-bit sequence, enough for token ids.
std::uint64_t SplitMix64(std::uint64_t* state) {
  std::uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

std::string CompletionBody(std::string_view model, std::int32_t prompt_tokens,
                           std::int32_t max_tokens, std::uint64_t prompt_seed, bool ignore_eos) {
  json::array prompt;
  prompt.reserve(static_cast<std::size_t>(std::max(prompt_tokens, 0)));
  std::uint64_t state = prompt_seed;
  for (std::int32_t i = 0; i < prompt_tokens; ++i) {
    prompt.push_back(kFirstTokenId + static_cast<std::int64_t>(SplitMix64(&state) % kTokenIdSpan));
  }
  json::object body;
  body["model"] = model;
  body["prompt"] = std::move(prompt);
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
