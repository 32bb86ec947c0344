// Inputs the profile fuzzer found (fuzz/profile_fuzz.cc, docs/fuzzing.md), minimised: each broke
// the loader's contract (a Profile or a ConfigError, nothing undefined on the way).

#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "config/config_error.h"
#include "config/profile.h"
#include "executor/executor_test_util.h"

namespace spillway {
namespace {

using executor_test::LoadTextError;

// A capacity of 1e110 bytes gave ~1e105 blocks, converted to int32: undefined behaviour
// (UBSan: "outside the range of representable values of type 'int'").
constexpr char kHugeCapacity[] =
    "name: m\n"
    "hardware: {peak_flops: 2e12, hbm_bandwidth_bytes_per_s: 1e12, hbm_capacity_bytes: 1e110}\n"
    "model: {num_params: 1e9, num_layers: 4, hidden_size: 256, num_kv_heads: 4, head_dim: 64, "
    "max_model_len: 2048}\n";

TEST(ProfileFuzzRegressionsTest, HugeCapacityIsRefusedNotOverflowed) {
  EXPECT_EQ(LoadTextError(kHugeCapacity),
            "p.yaml:2: hardware.hbm_capacity_bytes: leaves room for more than 1073741824 KV "
            "blocks; check it and the model's KV size, got '1e110'");
}

TEST(ProfileFuzzRegressionsTest, BlockCountSaturatesInsteadOfOverflowing) {
  Profile p;
  p.hbm_capacity_bytes = 1e110;
  p.num_params = 1e9;
  p.num_layers = 4;
  p.num_kv_heads = 4;
  p.head_dim = 64;
  EXPECT_EQ(p.num_gpu_blocks(), std::numeric_limits<std::int32_t>::max());
  p.hbm_capacity_bytes = 1e9;  // less than the weights
  EXPECT_EQ(p.num_gpu_blocks(), 0);
}

// A complex key ("? hardware: {...}") escaped as YAML::TypedBadConversion (config/yaml_reader.cc).
TEST(ProfileFuzzRegressionsTest, ComplexKeyIsAConfigError) {
  EXPECT_EQ(LoadTextError("name: m\n? hardware: {peak_flops: 1e12}\n"),
            "p.yaml:2: (top level): keys must be field names, not a map or a list, got a map");
}

}  // namespace
}  // namespace spillway
