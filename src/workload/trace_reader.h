#pragma once
// Readers for public LLM inference traces (see ../shared/traces/README.md):
//   Azure LLM inference trace CSV: header `TIMESTAMP,ContextTokens,GeneratedTokens`, TIMESTAMP
//     wall clock `YYYY-MM-DD HH:MM:SS.fffffff`;
//   Mooncake (FAST'25) JSONL: one object per line, {"timestamp": ms from start,
//     "input_length": N, "output_length": N, "hash_ids": [...]}, hash_ids (optional) naming
//     the prompt's consecutive blocks of kMooncakeBlockTokens tokens (equal ids = equal
//     tokens, so equal leading ids are a shared prefix).
// Both yield records with times in seconds from the first record.

#include <cstdint>
#include <string>
#include <vector>

#include "workload/scenario.h"

namespace spillway {

/// Tokens per block a Mooncake trace's hash_ids name: 512 (../shared/traces/README.md, "block
/// ids of 512-token prompt prefixes", as the Mooncake FAST'25 traces define them).
inline constexpr std::int32_t kMooncakeBlockTokens = 512;

/// Reads a whole trace. Throws config::ConfigError "FILE:LINE: message" on a malformed line
/// (bad timestamp, missing column, non-positive or non-integer token count, hash_ids not an
/// array of non-negative integers) or when the file cannot be read. Records are returned
/// sorted by time.
std::vector<TraceRecord> ReadTrace(const std::string& path, TraceFormat format);

/// Guesses the format from the file name: ".jsonl" -> Mooncake, otherwise Azure CSV.
TraceFormat GuessTraceFormat(const std::string& path);

}  // namespace spillway
