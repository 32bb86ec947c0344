#include "config/profile.h"

#include <cmath>
#include <filesystem>
#include <limits>

#include "config/yaml_reader.h"

namespace spillway {

std::int32_t Profile::num_gpu_blocks() const {
  const double kv_bytes =
      hbm_capacity_bytes * gpu_memory_utilization - weight_bytes() - activation_reserve_bytes;
  const double blocks = std::floor(kv_bytes / (kv_bytes_per_token() * block_size));
  if (!(blocks > 0)) {
    return 0;  // also NaN
  }
  // Saturate: converting a double beyond int32 to an integer is undefined.
  constexpr double kInt32Max = std::numeric_limits<std::int32_t>::max();
  return blocks >= kInt32Max ? std::numeric_limits<std::int32_t>::max()
                             : static_cast<std::int32_t>(blocks);
}

namespace {

Profile ParseProfile(const config::Field& root) {
  using config::Field;
  // `calibration` records the points `spillway calibrate` fitted (src/calibrate/): evidence
  // for the reader, not read here.
  root.RequireKnownKeys({"name", "description", "engine", "hardware", "model", "efficiency",
                         "memory", "calibration"});
  Profile p;
  p.name = root["name"].AsString();
  p.description = root["description"].String("");
  p.engine = root["engine"].String("");

  const Field hw = root["hardware"];
  hw.RequireKnownKeys({"gpu", "peak_flops", "hbm_bandwidth_bytes_per_s", "hbm_capacity_bytes"});
  p.gpu = hw["gpu"].String("");
  p.peak_flops = config::Positive(hw["peak_flops"], hw["peak_flops"].AsDouble());
  p.hbm_bandwidth_bytes_per_s =
      config::Positive(hw["hbm_bandwidth_bytes_per_s"], hw["hbm_bandwidth_bytes_per_s"].AsDouble());
  p.hbm_capacity_bytes =
      config::Positive(hw["hbm_capacity_bytes"], hw["hbm_capacity_bytes"].AsDouble());

  const Field m = root["model"];
  m.RequireKnownKeys({"name", "num_params", "num_layers", "hidden_size", "num_kv_heads", "head_dim",
                      "dtype_bytes", "max_model_len"});
  p.model = m["name"].String("");
  p.num_params = config::Positive(m["num_params"], m["num_params"].AsDouble());
  auto positive_int = [](const Field& f) {
    const std::int64_t v = f.AsInt();
    if (v <= 0 || v > std::numeric_limits<std::int32_t>::max()) {
      f.Fail("must be an integer in [1, 2147483647]");
    }
    return static_cast<std::int32_t>(v);
  };
  p.num_layers = positive_int(m["num_layers"]);
  p.hidden_size = positive_int(m["hidden_size"]);
  p.num_kv_heads = positive_int(m["num_kv_heads"]);
  p.head_dim = positive_int(m["head_dim"]);
  p.dtype_bytes = m["dtype_bytes"].present() ? positive_int(m["dtype_bytes"]) : 2;
  p.max_model_len = positive_int(m["max_model_len"]);

  const Field e = root["efficiency"];
  e.RequireKnownKeys(
      {"mfu", "mbu", "step_overhead_s", "per_seq_overhead_s", "first_token_overhead_s"});
  p.mfu = config::InRange(e["mfu"], e["mfu"].Double(p.mfu), 0, 1);
  p.mbu = config::InRange(e["mbu"], e["mbu"].Double(p.mbu), 0, 1);
  p.step_overhead_s = config::NonNegative(e["step_overhead_s"], e["step_overhead_s"].Double(0));
  p.per_seq_overhead_s =
      config::NonNegative(e["per_seq_overhead_s"], e["per_seq_overhead_s"].Double(0));
  p.first_token_overhead_s =
      config::NonNegative(e["first_token_overhead_s"], e["first_token_overhead_s"].Double(0));

  const Field mem = root["memory"];
  mem.RequireKnownKeys({"gpu_memory_utilization", "activation_reserve_bytes", "block_size"});
  p.gpu_memory_utilization = config::InRange(mem["gpu_memory_utilization"],
                                             mem["gpu_memory_utilization"].Double(0.9), 0, 1);
  p.activation_reserve_bytes = config::NonNegative(mem["activation_reserve_bytes"],
                                                   mem["activation_reserve_bytes"].Double(0));
  p.block_size = mem["block_size"].present() ? positive_int(mem["block_size"]) : 16;

  if (p.num_gpu_blocks() < 1) {
    root["memory"].Fail("leaves no memory for the KV cache after weights and reserve");
  }
  if (p.num_gpu_blocks() > kMaxGpuBlocks) {
    hw["hbm_capacity_bytes"].Fail("leaves room for more than " + std::to_string(kMaxGpuBlocks) +
                                  " KV blocks; check it and the model's KV size");
  }
  return p;
}

}  // namespace

Profile LoadProfile(const std::string& path) { return ParseProfile(config::Field::LoadFile(path)); }

Profile LoadProfileFromString(const std::string& yaml, const std::string& origin) {
  return ParseProfile(config::Field::LoadString(yaml, origin));
}

Profile LoadProfileByName(const std::string& name_or_path, const std::string& dir) {
  namespace fs = std::filesystem;
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".yaml")) {
    return LoadProfile(name_or_path);
  }
  const fs::path candidate = fs::path(dir) / (name_or_path + ".yaml");
  if (!fs::exists(candidate)) {
    throw config::ConfigError("profile '" + name_or_path + "' not found (looked for " +
                              candidate.string() + ")");
  }
  return LoadProfile(candidate.string());
}

}  // namespace spillway
