#pragma once
// What a live prompt's tokens are, for the engine's prefix caching (core/prompt_segments.h
// PromptSegments): the prompt cut into segments of kPromptSegmentTokens tokens, each named by a
// hash (FNV-1a, 64 bits) of its content, so two prompts that start with the same tokens start
// with the same segments, whatever the client.
//
// Token-id prompts are cut by their ids (exact). Text prompts and chat messages are cut every
// kPromptSegmentTokens x 4 bytes, the approximate tokenizer's 4 bytes a token
// (api/tokenizer.h); chat messages are joined with their roles, each part after its length (so
// no two lists of messages join the same), as a chat template would join them. Token ids and
// text hash from different seeds. Only whole segments count: the tail is the request's own.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "api/openai_types.h"
#include "core/prompt_segments.h"

namespace spillway::server {

/// Tokens a segment covers: one KV block of the shipped profiles (16).
inline constexpr std::int32_t kPromptSegmentTokens = 16;

/// The segments of a token-id prompt; null when it has no whole segment.
std::shared_ptr<const PromptSegments> SegmentsOfTokenIds(const std::vector<std::int32_t>& ids);
/// The segments of a text prompt (4 bytes a token); null when it has no whole segment.
std::shared_ptr<const PromptSegments> SegmentsOfText(std::string_view text);
/// The segments of a chat prompt: its messages as "<n>:role<m>:content", joined.
std::shared_ptr<const PromptSegments> SegmentsOfChat(const std::vector<api::ChatMessage>& messages);
/// The segments of `request`'s prompt, whichever of the three it is.
std::shared_ptr<const PromptSegments> SegmentsOf(const api::CompletionRequest& request);

}  // namespace spillway::server
