// SLO-safe budgets (DeriveSloBudgets): the derived step of max_num_seqs decodes plus the
// largest prefill chunk fits the TPOT SLO, one more sequence (with the minimum chunk) or one
// more chunk token would not, and the budgets grow with the SLO.

#include "sched/slo_budget.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "config/profile.h"
#include "executor/cost_model.h"
#include "executor/step_plan.h"

namespace spillway {
namespace {

// Llama-2-7B on an A100-80GB SXM (public specifications; efficiency numbers assumed), inline
// so the test does not depend on files under profiles/.
Profile A100Llama7b() {
  Profile p;
  p.name = "test-a100-7b";
  p.peak_flops = 312e12;
  p.hbm_bandwidth_bytes_per_s = 2.039e12;
  p.hbm_capacity_bytes = 80e9;
  p.num_params = 6.74e9;
  p.num_layers = 32;
  p.hidden_size = 4096;
  p.num_kv_heads = 32;
  p.head_dim = 128;
  p.dtype_bytes = 2;
  p.mfu = 0.5;
  p.mbu = 0.7;
  p.step_overhead_s = 0.002;
  p.per_seq_overhead_s = 0.00002;
  return p;
}

constexpr std::int32_t kMinChunk = 64;
constexpr std::int32_t kSeqsCap = 1024;
constexpr std::int32_t kTokensCap = 16384;

Seconds Step(const CostModel& cost, std::int32_t seqs, std::int32_t prefill, std::int64_t ctx) {
  return cost.StepTime(seqs, ctx, prefill, ctx);
}

TEST(SloBudgetTest, DerivedStepFitsTheSloAndOneMoreSequenceOrTokenWouldNot) {
  const CostModel cost(A100Llama7b());
  for (const Seconds slo : {0.02, 0.03, 0.05, 0.08, 0.1, 0.2}) {
    for (const std::int64_t ctx : {128, 1024, 4096}) {
      const SloBudgets b = DeriveSloBudgets(cost, slo, ctx);
      SCOPED_TRACE(testing::Message() << "slo " << slo << " ctx " << ctx << " -> seqs "
                                      << b.max_num_seqs << " tokens " << b.max_num_batched_tokens);
      ASSERT_GE(b.max_num_seqs, 1);
      ASSERT_LE(b.max_num_seqs, kSeqsCap);
      ASSERT_LE(b.max_num_batched_tokens, kTokensCap);
      const std::int32_t chunk = b.max_num_batched_tokens - b.max_num_seqs;
      EXPECT_GE(chunk, kMinChunk);
      // The full step fits, and full_step_s is that step's modelled time.
      EXPECT_LE(b.full_step_s, slo);
      EXPECT_DOUBLE_EQ(b.full_step_s, Step(cost, b.max_num_seqs, chunk, ctx));
      // max_num_seqs is the largest batch that still leaves room for a minimum chunk.
      EXPECT_LE(Step(cost, b.max_num_seqs, kMinChunk, ctx), slo);
      if (b.max_num_seqs < kSeqsCap) {
        EXPECT_GT(Step(cost, b.max_num_seqs + 1, kMinChunk, ctx), slo);
      }
      // The chunk is the largest that fits beside the full batch.
      if (b.max_num_batched_tokens < kTokensCap) {
        EXPECT_GT(Step(cost, b.max_num_seqs, chunk + 1, ctx), slo);
      }
    }
  }
}

TEST(SloBudgetTest, DerivedBudgetAsAStepPlanFitsTheSlo) {
  // The same step built as a StepPlan (B decodes at ctx, one prefill chunk at ctx) costs
  // full_step_s under CostModel::StepTime(plan), which is what the emulated executor charges.
  const CostModel cost(A100Llama7b());
  const std::int64_t ctx = 1024;
  const Seconds slo = 0.05;
  const SloBudgets b = DeriveSloBudgets(cost, slo, ctx);
  StepPlan plan;
  for (std::int32_t i = 0; i < b.max_num_seqs; ++i) {
    ScheduledSeq s;
    s.id = static_cast<RequestId>(i);
    s.num_new_tokens = 1;
    s.num_context_tokens = ctx;
    s.samples_token = true;
    s.is_decode = true;
    plan.seqs.push_back(s);
    plan.num_decode_tokens += 1;
  }
  ScheduledSeq prefill;
  prefill.id = 100000;
  prefill.num_new_tokens = b.max_num_batched_tokens - b.max_num_seqs;
  prefill.num_context_tokens = ctx;
  plan.seqs.push_back(prefill);
  plan.num_prefill_tokens = prefill.num_new_tokens;
  EXPECT_EQ(plan.num_tokens(), b.max_num_batched_tokens);
  EXPECT_NEAR(cost.StepTime(plan), b.full_step_s, 1e-12);
  EXPECT_LE(cost.StepTime(plan), slo);
}

// A looser SLO never shrinks the batch, and for the same batch never shrinks the token budget.
// (Across a change of batch size the token budget may drop: each added decode costs more step
// time than a prefill token, so the chunk shrinks by more than one token. The header promises
// no monotonicity of max_num_batched_tokens in the SLO.)
TEST(SloBudgetTest, BudgetsAreMonotoneInTheSlo) {
  const CostModel cost(A100Llama7b());
  for (const std::int64_t ctx : {256, 2048}) {
    SloBudgets prev = DeriveSloBudgets(cost, 0.015, ctx);
    for (int i = 0; i < 100; ++i) {
      const Seconds slo = 0.02 + 0.005 * i;
      const SloBudgets b = DeriveSloBudgets(cost, slo, ctx);
      EXPECT_GE(b.max_num_seqs, prev.max_num_seqs) << "slo " << slo << " ctx " << ctx;
      if (b.max_num_seqs == prev.max_num_seqs) {
        EXPECT_GE(b.max_num_batched_tokens, prev.max_num_batched_tokens)
            << "slo " << slo << " ctx " << ctx;
        EXPECT_GE(b.full_step_s, prev.full_step_s) << "slo " << slo << " ctx " << ctx;
      }
      EXPECT_LE(b.full_step_s, slo);
      prev = b;
    }
  }
}

TEST(SloBudgetTest, SeqsGrowStrictlyOverAWideSloRange) {
  const CostModel cost(A100Llama7b());
  EXPECT_LT(DeriveSloBudgets(cost, 0.02, 1024).max_num_seqs,
            DeriveSloBudgets(cost, 0.05, 1024).max_num_seqs);
  EXPECT_LT(DeriveSloBudgets(cost, 0.05, 1024).max_num_seqs,
            DeriveSloBudgets(cost, 0.2, 1024).max_num_seqs);
}

TEST(SloBudgetTest, LongerContextAllowsFewerSequences) {
  const CostModel cost(A100Llama7b());
  std::int32_t prev = kSeqsCap + 1;
  for (const std::int64_t ctx : {128, 512, 1024, 2048, 4096}) {
    const SloBudgets b = DeriveSloBudgets(cost, 0.05, ctx);
    EXPECT_LE(b.max_num_seqs, prev) << "ctx " << ctx;
    prev = b.max_num_seqs;
  }
  EXPECT_LT(DeriveSloBudgets(cost, 0.05, 4096).max_num_seqs,
            DeriveSloBudgets(cost, 0.05, 128).max_num_seqs);
}

TEST(SloBudgetTest, UnattainableSloFallsBackToOneSequenceAndTheMinimumChunk) {
  const CostModel cost(A100Llama7b());
  const Seconds slo = 0.001;  // below the fixed step overhead alone
  const SloBudgets b = DeriveSloBudgets(cost, slo, 1024);
  EXPECT_EQ(b.max_num_seqs, 1);
  EXPECT_EQ(b.max_num_batched_tokens, kMinChunk + 1);
  EXPECT_GT(b.full_step_s, slo);
  EXPECT_DOUBLE_EQ(b.full_step_s, Step(cost, 1, kMinChunk, 1024));
}

TEST(SloBudgetTest, OneSequenceFitsButNotItsMinimumChunkPlusAnother) {
  // An SLO just above a single sequence with the minimum chunk: exactly one sequence.
  const CostModel cost(A100Llama7b());
  const std::int64_t ctx = 1024;
  const Seconds one = Step(cost, 1, kMinChunk, ctx);
  const Seconds two = Step(cost, 2, kMinChunk, ctx);
  ASSERT_LT(one, two);
  const SloBudgets b = DeriveSloBudgets(cost, (one + two) / 2, ctx);
  EXPECT_EQ(b.max_num_seqs, 1);
  EXPECT_GE(b.max_num_batched_tokens, 1 + kMinChunk);
  EXPECT_LE(b.full_step_s, (one + two) / 2);
}

TEST(SloBudgetTest, LargerMinimumChunkLeavesRoomForFewerSequences) {
  const CostModel cost(A100Llama7b());
  const SloBudgets small = DeriveSloBudgets(cost, 0.05, 1024, 64);
  const SloBudgets large = DeriveSloBudgets(cost, 0.05, 1024, 512);
  EXPECT_LT(large.max_num_seqs, small.max_num_seqs);
  EXPECT_GE(large.max_num_batched_tokens - large.max_num_seqs, 512);
  EXPECT_LE(large.full_step_s, 0.05);
}

TEST(SloBudgetTest, GenerousSloIsClampedToTheCaps) {
  const CostModel cost(A100Llama7b());
  const SloBudgets b = DeriveSloBudgets(cost, 100.0, 128);
  EXPECT_EQ(b.max_num_seqs, kSeqsCap);
  EXPECT_EQ(b.max_num_batched_tokens, kTokensCap);
  EXPECT_LE(b.full_step_s, 100.0);

  const SloBudgets c = DeriveSloBudgets(cost, 100.0, 128, kMinChunk, /*max_seqs_cap=*/8,
                                        /*max_tokens_cap=*/512);
  EXPECT_EQ(c.max_num_seqs, 8);
  EXPECT_EQ(c.max_num_batched_tokens, 512);
}

TEST(SloBudgetTest, NeverExceedsTheTokenCap) {
  const CostModel cost(A100Llama7b());
  for (const Seconds slo : {0.03, 0.1, 0.5, 2.0, 100.0}) {
    for (const std::int32_t cap : {256, 1024, 4096}) {
      const SloBudgets b = DeriveSloBudgets(cost, slo, 512, kMinChunk, /*max_seqs_cap=*/64, cap);
      EXPECT_LE(b.max_num_batched_tokens, cap) << "slo " << slo << " cap " << cap;
      EXPECT_LE(b.max_num_seqs, 64);
    }
  }
}

TEST(SloBudgetTest, PerSequenceOverheadReducesTheBatch) {
  Profile p = A100Llama7b();
  const SloBudgets base = DeriveSloBudgets(CostModel(p), 0.05, 1024);
  p.per_seq_overhead_s = 0.0002;
  const SloBudgets heavier = DeriveSloBudgets(CostModel(p), 0.05, 1024);
  EXPECT_LT(heavier.max_num_seqs, base.max_num_seqs);
  EXPECT_LE(heavier.full_step_s, 0.05);
}

}  // namespace
}  // namespace spillway
