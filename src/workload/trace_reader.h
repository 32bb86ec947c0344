#pragma once
// Readers for public LLM inference traces (see ../shared/traces/README.md):
//   Azure LLM inference trace CSV: header `TIMESTAMP,ContextTokens,GeneratedTokens`, TIMESTAMP
//     wall clock `YYYY-MM-DD HH:MM:SS.fffffff`;
//   Mooncake (FAST'25) JSONL: one object per line, {"timestamp": ms from start,
//     "input_length": N, "output_length": N, "hash_ids": [...]}.
// Both yield records with times in seconds from the first record.

#include <cstdint>
#include <string>
#include <vector>

#include "workload/scenario.h"

namespace spillway {

/// Reads a whole trace. Throws config::ConfigError "FILE:LINE: message" on a malformed line
/// (bad timestamp, missing column, non-positive or non-integer token count) or when the file
/// cannot be read. Records are returned sorted by time.
std::vector<TraceRecord> ReadTrace(const std::string& path, TraceFormat format);

/// Guesses the format from the file name: ".jsonl" -> Mooncake, otherwise Azure CSV.
TraceFormat GuessTraceFormat(const std::string& path);

}  // namespace spillway
