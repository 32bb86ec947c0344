#pragma once
// What `spillway calibrate` measures on an engine from outside, over its OpenAI API: the points
// a profile is fitted to (profile_fit.h; the engine steps behind each are point_plans.h's).
//
// A prefill point is one prompt length sent alone (max_tokens 1, one request at a time): its
// TTFT is the prompt's prefill, in chunks of the engine's token budget, and the first-token
// cost. A decode point is `concurrency` streams decoding together: the inter-token latency is
// one engine step with that many decodes at the streams' mean context. A burst point
// (BurstPoint) is a public benchmark's run of many requests sent at once.

#include <cstdint>
#include <string>
#include <vector>

#include "core/types.h"

namespace spillway::calibrate {

struct PrefillPoint {
  std::int32_t prompt_tokens = 0;  ///< the prompt's length, tokens (the server's usage count)
  Seconds ttft_s = 0;              ///< median TTFT of the samples, seconds (client side)
  std::int32_t samples = 0;        ///< requests measured
};

struct DecodePoint {
  std::int32_t concurrency = 0;     ///< streams decoding at once
  std::int64_t context_tokens = 0;  ///< mean tokens in a stream's KV during its decode
  Seconds itl_s = 0;                ///< median inter-token gap over every stream, seconds
  std::int64_t samples = 0;         ///< gaps measured
};

/// A long prompt sent while `concurrency` streams decode: its TTFT is the engine's mixed steps
/// (the decodes and a chunk of the prompt in the rest of the token budget), the steps a
/// workload's arrivals meet, which neither a lone prompt nor a pure decode batch shows.
struct LoadedPrefillPoint {
  std::int32_t prompt_tokens = 0;
  std::int32_t concurrency = 0;           ///< streams decoding meanwhile
  std::int64_t context_tokens = 0;        ///< their mean context when the prompt came, tokens
  std::int32_t stream_output_tokens = 0;  ///< each stream's output (outlasting the prompt)
  Seconds ttft_s = 0;                     ///< median TTFT of the long prompt, seconds
  std::int32_t samples = 0;
};

/// A burst: every request sent at once to an idle engine (vLLM's benchmark_serving.py with
/// `--request-rate inf`), request i a prompt of prompt_tokens[i] generating output_tokens[i]:
/// the figures such a run publishes, its median TTFT, median TPOT (per request, (latency -
/// TTFT) / (output - 1), over the requests of two tokens or more) and its duration (to the last
/// request's end). Public benchmark runs are bursts; `spillway calibrate --points` fits them.
struct BurstPoint {
  std::string source;  ///< where the figures come from (a file, a commit)
  std::vector<std::int32_t> prompt_tokens;
  /// Each request's output. 0: the request ended at its first token with no text, which
  /// benchmark_serving.py records as TTFT 0 (it never saw text) and counts in the median;
  /// the prediction does the same (it is planned as one token).
  std::vector<std::int32_t> output_tokens;
  Seconds ttft_median_s = 0;
  Seconds tpot_median_s = 0;
  Seconds duration_s = 0;
};

struct CalibrationPoints {
  std::vector<PrefillPoint> prefill;
  std::vector<DecodePoint> decode;
  std::vector<LoadedPrefillPoint> loaded_prefill;
  std::vector<BurstPoint> bursts;
  /// The transport's share of every TTFT (CalibrationProbe::RoundTrip), seconds: taken off
  /// the TTFTs before the fit, since it does not hold the engine up.
  Seconds transport_s = 0;
  /// The decoding streams' prompt and output, tokens (decode points and prefills under decode).
  std::int32_t decode_prompt_tokens = 32;
  std::int32_t decode_output_tokens = 64;
};

/// The median of `samples`: for an even count the mean of the two middle values (numpy's, which
/// benchmark_serving.py's medians are); 0 when empty.
double Median(std::vector<double> samples);

/// The prompt lengths to measure: powers of two from 16 up to `max_prompt_tokens` (and it,
/// when it is none), ascending. Throws std::invalid_argument when max_prompt_tokens < 16.
std::vector<std::int32_t> PromptLadder(std::int32_t max_prompt_tokens);

/// The batch sizes to try, 1, 2, 4, ... up to `max_concurrency` (and it), ascending. Throws
/// std::invalid_argument when max_concurrency < 1.
std::vector<std::int32_t> ConcurrencyLadder(std::int32_t max_concurrency);

}  // namespace spillway::calibrate
