#pragma once
// Calibration points read from a YAML file, for `spillway calibrate --points FILE`: figures
// measured elsewhere (a public benchmark's runs, say) fitted as the points `calibrate` measures
// itself. The file (profiles/points/*.yaml are examples):
//
//   source: where the figures come from       measured_at: when (evidence; free text)
//   engine: {name: "vLLM 0.5.4, ...", max_num_batched_tokens: 2048, max_num_seqs: 256,
//            enable_chunked_prefill: false, max_model_len: 2048, ...}   (required, with the
//            two budgets: the engine keys of a scenario but `profile`, the configuration the
//            figures were measured on; slo_budgets false unless it says)
//   transport_s: 0                             the transport's share of a TTFT, seconds
//   decode_prompt_tokens: 32                   decode_output_tokens: 64
//   prefill: [{prompt_tokens, ttft_s, samples}, ...]
//   decode:  [{concurrency, context_tokens, itl_s, samples}, ...]   (concurrency at most
//            max_num_seqs; the streams generate decode_output_tokens from a prompt of
//            decode_prompt_tokens, or, when the point says its context_tokens, of
//            context_tokens - decode_output_tokens / 2: the mean context of their decode)
//   bursts:  [{source, ttft_median_s, tpot_median_s, duration_s,
//              prompt_tokens: [...], output_tokens: [...]}, ...]
//
// Every list may be absent. Errors name the file, line and field (config::ConfigError).

#include <string>

#include "calibrate/calibration_points.h"
#include "config/engine_settings.h"

namespace spillway::calibrate {

struct PointsFile {
  std::string source;
  std::string measured_at;
  std::string engine;               ///< engine.name: the engine and version measured
  config::EngineSettings settings;  ///< the rest of engine: what it ran with
  CalibrationPoints points;
};

/// Reads `path`. Throws config::ConfigError on a missing file, bad YAML, an unknown key, a
/// value out of range, a decode point of more streams than engine.max_num_seqs, a burst whose
/// two lists differ in length, or a file with fewer than three points.
PointsFile LoadPointsFile(const std::string& path);

}  // namespace spillway::calibrate
