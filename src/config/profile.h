#pragma once
// Hardware + model profile for the roofline cost model (executor/cost_model.h), loaded from
// YAML beside the other loaders (config/), at start-up only.
// The profiles shipped in profiles/ cite the source of each number in a comment.

#include <cstdint>
#include <string>

namespace spillway {

/// Most KV blocks a profile may yield (as `spillway serve` bounds engine.num_gpu_blocks): the
/// block pool holds per-block state, so a typo in the capacity must not ask for gigabytes.
inline constexpr std::int32_t kMaxGpuBlocks = 1 << 30;

struct Profile {
  std::string name;
  std::string description;
  /// The serving engine and version whose efficiency the profile models ("vLLM 0.6, single-step
  /// scheduling"); empty when the profile does not say.
  std::string engine;

  // Hardware.
  std::string gpu;                       ///< e.g. "NVIDIA A100-SXM4-80GB"
  double peak_flops = 0;                 ///< dense BF16 tensor FLOP/s
  double hbm_bandwidth_bytes_per_s = 0;  ///< HBM bandwidth, bytes/s
  double hbm_capacity_bytes = 0;         ///< device memory, bytes

  // Model.
  std::string model;      ///< e.g. "meta-llama/Llama-2-7b-hf"
  double num_params = 0;  ///< parameters (weights read once per step)
  std::int32_t num_layers = 0;
  std::int32_t hidden_size = 0;   ///< d_model
  std::int32_t num_kv_heads = 0;  ///< H_kv (= heads for MHA, fewer for GQA)
  std::int32_t head_dim = 0;
  std::int32_t dtype_bytes = 2;       ///< weights and KV cache element size (BF16 = 2)
  std::int32_t max_model_len = 4096;  ///< context window, tokens

  // Achieved efficiency and fixed costs.
  double mfu = 0.5;                 ///< model FLOP utilisation in (0, 1]
  double mbu = 0.7;                 ///< memory-bandwidth utilisation in (0, 1]
  double step_overhead_s = 0.0;     ///< per-iteration fixed cost (launch, scheduling)
  double per_seq_overhead_s = 0.0;  ///< per scheduled sequence (sampling, metadata)
  /// Per request, in the step that samples its first token (tokenising and admitting it,
  /// building its metadata and the first response chunk): what makes a short prompt's TTFT
  /// longer than one step. Seconds; 0 in profiles that predate it.
  double first_token_overhead_s = 0.0;

  // Memory plan.
  double gpu_memory_utilization = 0.9;  ///< fraction of HBM the engine may use (vLLM default)
  double activation_reserve_bytes = 0;  ///< kept free for activations and the CUDA graph pool
  std::int32_t block_size = 16;         ///< tokens per KV block (vLLM default)

  /// KV bytes per token: 2 (K and V) x layers x H_kv x head_dim x dtype bytes.
  double kv_bytes_per_token() const {
    return 2.0 * num_layers * num_kv_heads * head_dim * dtype_bytes;
  }
  /// Weight bytes: parameters x dtype bytes.
  double weight_bytes() const { return num_params * dtype_bytes; }
  /// Blocks that fit in HBM x utilisation after weights and the activation reserve; 0 when
  /// none, saturating at the int32 maximum.
  std::int32_t num_gpu_blocks() const;
};

/// Loads a profile from a YAML file; throws config::ConfigError naming file, line and field.
Profile LoadProfile(const std::string& path);
/// The same from YAML text (tests, fuzzing); `origin` names it in errors.
Profile LoadProfileFromString(const std::string& yaml, const std::string& origin);

/// Resolves a profile by name ("seed-a100-7b") in `dir` (dir/NAME.yaml) or by path.
Profile LoadProfileByName(const std::string& name_or_path, const std::string& dir);

}  // namespace spillway
