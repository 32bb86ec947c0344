// libFuzzer target: the executor profile loader (LoadProfileFromString, executor/profile.h)
// and the roofline cost model on the profiles that load.
//
// The contract: a profile, or config::ConfigError; any other exception escapes and libFuzzer
// reports it. A profile that loads leaves at least one KV block (the loader's own check) and
// gives a one-token step a duration that is a number >= 0.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "config/config_error.h"
#include "config/profile.h"
#include "core/check.h"
#include "executor/cost_model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  spillway::Profile profile;
  try {
    profile = spillway::LoadProfileFromString(yaml, "<fuzz>");
  } catch (const spillway::config::ConfigError&) {
    return 0;  // the documented failure
  }
  SPILLWAY_CHECK(profile.num_gpu_blocks() >= 1 &&
                 profile.num_gpu_blocks() <= spillway::kMaxGpuBlocks);
  SPILLWAY_CHECK(profile.kv_bytes_per_token() > 0);
  const spillway::CostModel cost(profile);
  const spillway::Seconds decode_s = cost.StepTime(1, 1, 0);
  const spillway::Seconds prefill_s = cost.StepTime(0, 0, 16);
  SPILLWAY_CHECK(decode_s >= 0 && prefill_s >= 0);  // false for NaN too
  return 0;
}
