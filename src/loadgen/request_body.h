#pragma once
// The body of one streaming completion request, built with Boost.JSON the way vLLM's own
// benchmark (`vllm bench serve`, random dataset) sends it: a prompt of token ids (so its
// length is exact on any server), `max_tokens` with `ignore_eos: true` (so exactly that many
// tokens are generated; a scenario class with a `max_tokens` cap sends it without, and the
// model stops where it stops), temperature 0, and `stream_options.include_usage` (so the final
// chunk reports the token counts).
//
// A prompt that shares segments with others (core/prompt_segments.h: a class's system prompt,
// a prompt asked again, a trace record's hash_ids) begins with its segments' tokens, each
// segment's ids a function of its segment id alone, so a real engine's prefix cache finds the
// sharing the simulator models.

#include <cstdint>
#include <string>
#include <string_view>

#include "core/prompt_segments.h"

namespace spillway::loadgen {

/// Token ids are drawn from [kFirstTokenId, kFirstTokenId + kTokenIdSpan): ordinary ids in
/// every common vocabulary (32k Llama-2 and up), clear of the special tokens at the start.
inline constexpr std::int64_t kFirstTokenId = 1000;
inline constexpr std::int64_t kTokenIdSpan = 10000;

/// POST /v1/completions body: {"model", "prompt": [ids], "max_tokens", "temperature": 0,
/// "ignore_eos": true (only when `ignore_eos`), "stream": true, "stream_options":
/// {"include_usage": true}}. The prompt has exactly max(prompt_tokens, 0) ids.
///
/// Without `segments` (null) the ids are a deterministic function of `prompt_seed` (a retry
/// sends the same prompt; different requests share no prefix, so prefix caching does not make
/// them cheaper). With `segments`, the prompt is the segments' tokens in order
/// (segments->segment_tokens ids for each of segments->ids, the same ids for the same segment
/// id in every body and run), cut at prompt_tokens, then the request's own ids from
/// `prompt_seed` up to prompt_tokens. `segments` is only read during the call.
std::string CompletionBody(std::string_view model, std::int32_t prompt_tokens,
                           std::int32_t max_tokens, std::uint64_t prompt_seed,
                           bool ignore_eos = true, const PromptSegments* segments = nullptr);

}  // namespace spillway::loadgen
