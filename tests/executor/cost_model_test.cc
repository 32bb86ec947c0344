// CostModel (cost_model.h): the roofline step time, checked against a first-principles
// re-derivation on a small synthetic profile, plus its qualitative promises (memory-bound decode,
// compute-bound long prefill, monotone in batch size and context, one formula for a StepPlan
// and for the scalar overload).

#include "executor/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "config/profile.h"
#include "executor/executor_test_util.h"
#include "executor/step_plan.h"

namespace spillway {
namespace {

/// Round numbers: 2 GB of weights read in 4 ms; 5e13 effective FLOP/s; 16 KiB of KV per token.
Profile TinyProfile() {
  Profile p;
  p.name = "tiny";
  p.peak_flops = 1e14;
  p.hbm_bandwidth_bytes_per_s = 1e12;
  p.hbm_capacity_bytes = 80e9;
  p.num_params = 1e9;
  p.num_layers = 4;
  p.hidden_size = 1024;
  p.num_kv_heads = 8;
  p.head_dim = 128;
  p.dtype_bytes = 2;
  p.mfu = 0.5;
  p.mbu = 0.5;
  p.step_overhead_s = 0.001;
  p.per_seq_overhead_s = 0.0001;
  return p;
}

using executor_test::SeedProfile;

/// The documented algorithm, token by token: each new token costs 2N + 2 * layers * ctx * d
/// FLOPs with ctx the tokens before it; every scheduled sequence reads its whole KV.
Seconds ExpectedStepTime(const Profile& p, const StepPlan& plan) {
  if (plan.empty()) {
    return 0;
  }
  double flops = 0;
  double kv_tokens = 0;
  for (const ScheduledSeq& s : plan.seqs) {
    for (std::int32_t i = 0; i < s.num_new_tokens; ++i) {
      const double ctx = static_cast<double>(s.num_context_tokens + i);
      flops += 2.0 * p.num_params + 2.0 * p.num_layers * ctx * p.hidden_size;
    }
    kv_tokens += static_cast<double>(s.num_context_tokens + s.num_new_tokens);
  }
  const double bytes = p.num_params * p.dtype_bytes +
                       kv_tokens * 2.0 * p.num_layers * p.num_kv_heads * p.head_dim * p.dtype_bytes;
  return p.step_overhead_s + p.per_seq_overhead_s * static_cast<double>(plan.seqs.size()) +
         std::max(flops / (p.peak_flops * p.mfu), bytes / (p.hbm_bandwidth_bytes_per_s * p.mbu));
}

void AddDecodes(StepPlan* plan, std::int32_t n, std::int64_t context, RequestId first_id = 1) {
  for (std::int32_t i = 0; i < n; ++i) {
    plan->seqs.push_back({.id = first_id + static_cast<RequestId>(i),
                          .num_new_tokens = 1,
                          .num_context_tokens = context,
                          .samples_token = true,
                          .is_decode = true});
    plan->num_decode_tokens += 1;
  }
}

void AddPrefill(StepPlan* plan, std::int32_t tokens, std::int64_t context, bool last_chunk,
                RequestId id = 1000) {
  plan->seqs.push_back({.id = id,
                        .num_new_tokens = tokens,
                        .num_context_tokens = context,
                        .samples_token = last_chunk,
                        .is_decode = false});
  plan->num_prefill_tokens += tokens;
}

void ExpectRelNear(double actual, double expected, double rel = 1e-12) {
  EXPECT_NEAR(actual, expected, rel * std::max(1e-300, std::abs(expected)))
      << "actual " << actual << ", expected " << expected;
}

TEST(CostModelTest, EmptyStepCostsNothing) {
  const CostModel model(TinyProfile());
  EXPECT_EQ(model.StepTime(StepPlan{}), 0);
  EXPECT_EQ(model.StepTime(0, 0, 0), 0);
  EXPECT_EQ(model.StepTime(0, 4096, 0, 0), 0);
}

TEST(CostModelTest, MatchesTheDocumentedFormulaForADecodeBatch) {
  const Profile p = TinyProfile();
  const CostModel model(p);
  StepPlan plan;
  AddDecodes(&plan, 32, 100);
  // Memory: 2e9 + 32 x 101 x 16384 bytes at 5e11 B/s; overheads 1 ms + 32 x 0.1 ms.
  const Seconds expected = 0.001 + 32 * 0.0001 + (2e9 + 32.0 * 101 * 16384) / 5e11;
  ExpectRelNear(model.StepTime(plan), expected);
  ExpectRelNear(model.StepTime(plan), ExpectedStepTime(p, plan));
}

TEST(CostModelTest, MatchesTheDocumentedFormulaForAChunkedPrefillWithContext) {
  const Profile p = TinyProfile();
  const CostModel model(p);
  StepPlan plan;
  AddPrefill(&plan, 1536, 512, /*last_chunk=*/false);
  ExpectRelNear(model.StepTime(plan), ExpectedStepTime(p, plan));
}

TEST(CostModelTest, MatchesTheDocumentedFormulaForAMixedBatch) {
  const Profile p = TinyProfile();
  const CostModel model(p);
  StepPlan plan;
  AddDecodes(&plan, 7, 300, 1);
  AddDecodes(&plan, 5, 2000, 100);
  AddPrefill(&plan, 256, 64, /*last_chunk=*/true);
  ExpectRelNear(model.StepTime(plan), ExpectedStepTime(p, plan));
}

TEST(CostModelTest, DecodeIsMemoryBoundPeakFlopsDoNotChangeIt) {
  for (const Profile& base : {TinyProfile(), SeedProfile()}) {
    Profile faster_compute = base;
    faster_compute.peak_flops *= 4;
    const CostModel model(base);
    const CostModel faster(faster_compute);
    // Batches below the ridge point (the tiny profile's small KV turns a 256-wide decode
    // compute-bound, as a roofline should).
    for (const std::int32_t n : {1, 8, 32, 128}) {
      EXPECT_DOUBLE_EQ(model.StepTime(n, 500, 0), faster.StepTime(n, 500, 0))
          << base.name << " n=" << n;
    }
  }
}

TEST(CostModelTest, DecodeTimeScalesWithMemoryBandwidth) {
  Profile slow = TinyProfile();
  slow.hbm_bandwidth_bytes_per_s /= 2;
  const CostModel model(TinyProfile());
  const CostModel half_bandwidth(slow);
  const Seconds overhead = 0.001 + 32 * 0.0001;
  ExpectRelNear(half_bandwidth.StepTime(32, 100, 0) - overhead,
                2 * (model.StepTime(32, 100, 0) - overhead), 1e-9);
}

TEST(CostModelTest, LongPrefillIsComputeBoundBandwidthDoesNotChangeIt) {
  for (const Profile& base : {TinyProfile(), SeedProfile()}) {
    Profile faster_memory = base;
    faster_memory.hbm_bandwidth_bytes_per_s *= 4;
    const CostModel model(base);
    const CostModel faster(faster_memory);
    EXPECT_DOUBLE_EQ(model.StepTime(0, 0, 2048), faster.StepTime(0, 0, 2048)) << base.name;
    // And it does scale with compute.
    Profile faster_compute = base;
    faster_compute.peak_flops *= 2;
    EXPECT_LT(CostModel(faster_compute).StepTime(0, 0, 2048), model.StepTime(0, 0, 2048))
        << base.name;
  }
}

TEST(CostModelTest, ChunkingAComputeBoundPrefillPreservesItsFlops) {
  // Splitting a prompt into chunks (the second attending to the first) does the same FLOPs:
  // compute time of the whole = sum of the chunks' compute times.
  const Profile p = TinyProfile();
  const CostModel model(p);
  const Seconds per_step_overhead = p.step_overhead_s + p.per_seq_overhead_s;
  const Seconds whole = model.StepTime(0, 0, 4096) - per_step_overhead;
  const Seconds chunked = (model.StepTime(0, 0, 2048, 0) - per_step_overhead) +
                          (model.StepTime(0, 0, 2048, 2048) - per_step_overhead);
  ExpectRelNear(chunked, whole, 1e-9);
}

TEST(CostModelTest, StepTimeIsMonotoneInBatchSize) {
  for (const Profile& p : {TinyProfile(), SeedProfile()}) {
    const CostModel model(p);
    for (const std::int64_t ctx : {0, 182, 1000, 4000}) {
      Seconds previous = 0;
      for (std::int32_t n = 1; n <= 256; ++n) {
        const Seconds t = model.StepTime(n, ctx, 0);
        ASSERT_GT(t, previous) << p.name << " ctx=" << ctx << " n=" << n;
        previous = t;
      }
    }
  }
}

TEST(CostModelTest, StepTimeIsMonotoneInContext) {
  for (const Profile& p : {TinyProfile(), SeedProfile()}) {
    const CostModel model(p);
    for (const std::int32_t n : {1, 32, 200}) {
      Seconds previous = 0;
      for (std::int64_t ctx = 0; ctx <= 4096; ctx += 16) {
        const Seconds t = model.StepTime(n, ctx, 0);
        ASSERT_GT(t, previous) << p.name << " n=" << n << " ctx=" << ctx;
        previous = t;
      }
    }
  }
}

TEST(CostModelTest, StepTimeIsMonotoneInPrefillTokensAndPrefillContext) {
  const CostModel model(SeedProfile());
  Seconds previous = 0;
  for (std::int32_t tokens = 1; tokens <= 4096; tokens *= 2) {
    const Seconds t = model.StepTime(16, 200, tokens);
    ASSERT_GT(t, previous) << tokens;
    previous = t;
  }
  EXPECT_LT(model.StepTime(16, 200, 512, 0), model.StepTime(16, 200, 512, 2048));
}

TEST(CostModelTest, PlanAndScalarOverloadAgreeForTheSameBatch) {
  for (const Profile& p : {TinyProfile(), SeedProfile()}) {
    const CostModel model(p);
    for (const std::int32_t n : {0, 1, 32, 40, 255}) {
      for (const std::int64_t ctx : {0, 182, 3000}) {
        for (const std::int32_t prefill : {0, 1, 32, 512, 2048}) {
          for (const std::int64_t prefill_ctx : {0, 700}) {
            if (n == 0 && prefill == 0) {
              continue;
            }
            StepPlan plan;
            AddDecodes(&plan, n, ctx);
            if (prefill > 0) {
              AddPrefill(&plan, prefill, prefill_ctx, /*last_chunk=*/true);
            }
            ExpectRelNear(model.StepTime(plan), model.StepTime(n, ctx, prefill, prefill_ctx),
                          1e-12);
          }
        }
      }
    }
  }
}

TEST(CostModelTest, OverheadsArePerStepPlusPerScheduledSequence) {
  Profile no_overhead = TinyProfile();
  no_overhead.step_overhead_s = 0;
  no_overhead.per_seq_overhead_s = 0;
  const CostModel with(TinyProfile());
  const CostModel without(no_overhead);
  ExpectRelNear(with.StepTime(10, 100, 64) - without.StepTime(10, 100, 64), 0.001 + 11 * 0.0001,
                1e-9);
}

TEST(CostModelTest, TheFirstTokenOverheadIsPaidOncePerPromptItsLastChunkCompletes) {
  Profile p = TinyProfile();
  const CostModel without(p);
  p.first_token_overhead_s = 0.003;
  const CostModel with(p);
  StepPlan plan;
  AddDecodes(&plan, 8, 512);
  AddPrefill(&plan, 256, 0, /*last_chunk=*/false, 100);
  // Decodes and a prompt's non-final chunk sample no first token.
  ExpectRelNear(with.StepTime(plan), without.StepTime(plan));
  AddPrefill(&plan, 128, 0, /*last_chunk=*/true, 101);
  AddPrefill(&plan, 64, 0, /*last_chunk=*/true, 102);
  ExpectRelNear(with.StepTime(plan), without.StepTime(plan) + 2 * 0.003);
  // The scalar overload counts its prefill as one that completes.
  ExpectRelNear(with.StepTime(4, 512, 128), without.StepTime(4, 512, 128) + 0.003);
  ExpectRelNear(with.StepTime(4, 512, 0), without.StepTime(4, 512, 0));
}

}  // namespace
}  // namespace spillway
