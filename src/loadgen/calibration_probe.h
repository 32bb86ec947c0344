#pragma once
// `spillway calibrate`'s measurements (calibrate/calibration_points.h) against any
// OpenAI-compatible server, with the load generator's own streaming attempt (http_attempt.h):
// prompts of token ids (exact lengths on any server), `ignore_eos` (exact output lengths), a
// different prompt for every request (no prefix-cache or result-cache hit).
//
// Concurrency: an io_context of its own, run on the calling thread for each measurement.

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "calibrate/calibration_points.h"
#include "core/types.h"
#include "report/attempt_record.h"

namespace spillway::loadgen {

struct ProbeOptions {
  std::string target_url;           ///< e.g. http://127.0.0.1:8000
  std::string model;                ///< empty: the first id of GET /v1/models
  std::string api_key;              ///< sent as "Authorization: Bearer KEY" when non-empty
  Seconds request_timeout_s = 120;  ///< cap on one request
};

/// A request that did not stream to its end (a refusal, an error, a timeout, a reset): the
/// measurement cannot be taken. what() says which request and why.
class ProbeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Why the attempt `r` is not a measurement of `model`, in words; empty when it streamed every
/// token asked for from that model. Not a measurement: no answer, a refusal, another status,
/// a stream that ended early or short, and what a gateway in front does instead of the
/// engine's work: an answer from another model (X-Spillway-Served-Model: its cascade), with
/// max_tokens clamped (X-Degraded), or from its result cache (X-Cache: hit).
std::string ProbeFailure(const AttemptRecord& r, const std::string& model);

class CalibrationProbe {
 public:
  /// Resolves the target and asks GET /v1/models for the model. Throws std::invalid_argument
  /// for a bad URL and std::runtime_error when the target does not answer.
  explicit CalibrationProbe(const ProbeOptions& options);
  ~CalibrationProbe();
  CalibrationProbe(const CalibrationProbe&) = delete;
  CalibrationProbe& operator=(const CalibrationProbe&) = delete;

  /// The model the requests name.
  const std::string& model() const;
  /// The model's context as GET /v1/models gives it (vLLM's and serve's `max_model_len`),
  /// tokens; nullopt when it does not.
  std::optional<std::int32_t> max_model_len() const;

  /// The transport's share of a TTFT measured here: the median time of `samples` GET
  /// /v1/models, each on a new connection as every measured request is (connect, request,
  /// the server's parsing and the answer's way back), seconds. It does not hold the engine up,
  /// so the TTFTs are fitted without it. Throws ProbeError when one is not answered 200.
  Seconds RoundTrip(std::int32_t samples);

  /// `samples` requests of `prompt_tokens` tokens, one after another, each max_tokens 1; the
  /// point's TTFT is their median. Throws ProbeError when one does not complete.
  calibrate::PrefillPoint Prefill(std::int32_t prompt_tokens, std::int32_t samples);

  /// `concurrency` streams of `prompt_tokens` each, sent at once, each generating
  /// `output_tokens`; the point's ITL is the median of every gap between two tokens of a
  /// stream, its context the prompt plus half the output. Throws ProbeError when a stream does
  /// not complete (`refused` in what() when the server answered 429 or 503).
  calibrate::DecodePoint Decode(std::int32_t concurrency, std::int32_t prompt_tokens,
                                std::int32_t output_tokens);

  /// `concurrency` streams of `stream_prompt_tokens` generating `stream_output_tokens` each;
  /// once every stream has two tokens, one prompt of `prompt_tokens` with max_tokens 1. Its
  /// TTFT is the point's (context: the streams' prompt plus their tokens when it was sent). The
  /// streams must outlast the prompt's prefill: ProbeError when they do not, or when any
  /// request does not complete.
  calibrate::LoadedPrefillPoint PrefillUnderDecode(std::int32_t prompt_tokens,
                                                   std::int32_t concurrency,
                                                   std::int32_t stream_prompt_tokens,
                                                   std::int32_t stream_output_tokens);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spillway::loadgen
