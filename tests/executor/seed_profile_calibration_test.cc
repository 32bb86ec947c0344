// profiles/seed-a100-7b.yaml states, in its header, the reference numbers its efficiency fields
// were calibrated to (from ../shared/seeds/overload-and-failure-handling.txt). These tests hold
// the roofline to those claims:
//   prefill of a 32-token prompt alone ~15 ms                       (§5.1)
//   decode step ~30 ms with 32 running, > 35 ms from about 40 running (§5.3, §5.4)
//   KV 512 KiB per token                                            (§7)
// Decode steps are evaluated at 182 tokens of context per running sequence.

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "config/profile.h"
#include "executor/cost_model.h"

namespace spillway {
namespace {

constexpr std::int64_t kDecodeContext = 182;
constexpr Seconds kTpotSlo = 0.035;  // lesson §7: p95 TPOT <= 35 ms

CostModel SeedModel() {
  return CostModel(LoadProfile(std::string(SPILLWAY_SOURCE_DIR) + "/profiles/seed-a100-7b.yaml"));
}

TEST(SeedProfileCalibrationTest, PrefillOf32TokensAloneTakesAbout15Ms) {
  const Seconds t = SeedModel().StepTime(/*num_decodes=*/0, 0, /*prefill_tokens=*/32);
  EXPECT_GE(t, 0.012);
  EXPECT_LE(t, 0.018);
}

TEST(SeedProfileCalibrationTest, DecodeStepWith32RunningTakesAbout30Ms) {
  const Seconds t = SeedModel().StepTime(/*num_decodes=*/32, kDecodeContext, 0);
  EXPECT_GE(t, 0.027);
  EXPECT_LE(t, 0.035);
}

TEST(SeedProfileCalibrationTest, DecodeStepWith40RunningExceeds35Ms) {
  EXPECT_GT(SeedModel().StepTime(/*num_decodes=*/40, kDecodeContext, 0), kTpotSlo);
}

TEST(SeedProfileCalibrationTest, DecodeCrossesTheTpotSloAtAbout40Running) {
  const CostModel model = SeedModel();
  std::int32_t first_over = 0;
  for (std::int32_t n = 1; n <= 256 && first_over == 0; ++n) {
    if (model.StepTime(n, kDecodeContext, 0) > kTpotSlo) {
      first_over = n;
    }
  }
  // "about 40": the crossing lies above the 32-running reference and no later than 40.
  EXPECT_GT(first_over, 32);
  EXPECT_LE(first_over, 40);
  for (std::int32_t n = 40; n <= 256; ++n) {
    ASSERT_GT(model.StepTime(n, kDecodeContext, 0), kTpotSlo) << n;
  }
}

TEST(SeedProfileCalibrationTest, KvIs512KiBPerToken) {
  EXPECT_EQ(SeedModel().profile().kv_bytes_per_token(), 512.0 * 1024);
}

}  // namespace
}  // namespace spillway
