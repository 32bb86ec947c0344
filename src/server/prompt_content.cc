#include "server/prompt_content.h"

#include <string>

namespace spillway::server {
namespace {

constexpr std::uint64_t kFnvOffset = 0xCBF29CE484222325ULL;
constexpr std::uint64_t kFnvPrime = 0x100000001B3ULL;
constexpr std::size_t kBytesPerToken = 4;  // the approximate tokenizer's

// Seeds of the three kinds of prompt, so that a text never names the same segment as token ids.
constexpr std::uint64_t kTokenIdsSeed = 0x746F6B656E696473ULL;
constexpr std::uint64_t kTextSeed = 0x74657874ULL;

std::uint64_t Fnv1a(const unsigned char* bytes, std::size_t n, std::uint64_t seed) {
  std::uint64_t h = kFnvOffset ^ seed;
  for (std::size_t i = 0; i < n; ++i) {
    h = (h ^ bytes[i]) * kFnvPrime;
  }
  return h;
}

std::shared_ptr<const PromptSegments> Cut(const unsigned char* bytes, std::size_t n,
                                          std::size_t segment_bytes, std::uint64_t seed) {
  const std::size_t whole = n / segment_bytes;
  if (whole == 0) {
    return nullptr;
  }
  auto segments = std::make_shared<PromptSegments>();
  segments->segment_tokens = kPromptSegmentTokens;
  segments->ids.reserve(whole);
  for (std::size_t k = 0; k < whole; ++k) {
    segments->ids.push_back(Fnv1a(bytes + k * segment_bytes, segment_bytes, seed));
  }
  return segments;
}

}  // namespace

std::shared_ptr<const PromptSegments> SegmentsOfTokenIds(const std::vector<std::int32_t>& ids) {
  return Cut(reinterpret_cast<const unsigned char*>(ids.data()), ids.size() * sizeof(std::int32_t),
             kPromptSegmentTokens * sizeof(std::int32_t), kTokenIdsSeed);
}

std::shared_ptr<const PromptSegments> SegmentsOfText(std::string_view text) {
  return Cut(reinterpret_cast<const unsigned char*>(text.data()), text.size(),
             kPromptSegmentTokens * kBytesPerToken, kTextSeed);
}

std::shared_ptr<const PromptSegments> SegmentsOfChat(
    const std::vector<api::ChatMessage>& messages) {
  // Each role and content with its length first: no two lists of messages join the same.
  std::string joined;
  for (const api::ChatMessage& m : messages) {
    joined.append(std::to_string(m.role.size())).append(":").append(m.role);
    joined.append(std::to_string(m.content.size())).append(":").append(m.content);
  }
  return SegmentsOfText(joined);
}

std::shared_ptr<const PromptSegments> SegmentsOf(const api::CompletionRequest& request) {
  if (!request.prompt_token_ids.empty()) {
    return SegmentsOfTokenIds(request.prompt_token_ids);
  }
  if (!request.messages.empty()) {
    return SegmentsOfChat(request.messages);
  }
  return SegmentsOfText(request.prompt_text);
}

}  // namespace spillway::server
