#include "sched/slo_budget.h"

#include "core/check.h"

namespace spillway {
namespace {

// Largest x in [lo, hi] with fits(x), given fits(lo); fits is monotone (true then false).
template <typename Fits>
std::int32_t LargestFitting(std::int32_t lo, std::int32_t hi, Fits fits) {
  while (lo < hi) {
    const std::int32_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

}  // namespace

SloBudgets DeriveSloBudgets(const CostModel& cost, Seconds tpot_slo_s, std::int64_t context_tokens,
                            std::int32_t min_prefill_chunk, std::int32_t max_seqs_cap,
                            std::int32_t max_tokens_cap) {
  SPILLWAY_CHECK(tpot_slo_s > 0 && min_prefill_chunk > 0);
  auto step = [&](std::int32_t seqs, std::int32_t prefill) {
    return cost.StepTime(seqs, context_tokens, prefill, context_tokens);
  };
  SloBudgets b;
  if (step(1, min_prefill_chunk) > tpot_slo_s) {
    b.max_num_seqs = 1;
  } else {
    b.max_num_seqs = LargestFitting(
        1, max_seqs_cap, [&](std::int32_t n) { return step(n, min_prefill_chunk) <= tpot_slo_s; });
  }
  const std::int32_t max_chunk = max_tokens_cap - b.max_num_seqs;
  const std::int32_t chunk =
      step(b.max_num_seqs, min_prefill_chunk) > tpot_slo_s
          ? min_prefill_chunk
          : LargestFitting(min_prefill_chunk, max_chunk,
                           [&](std::int32_t p) { return step(b.max_num_seqs, p) <= tpot_slo_s; });
  b.max_num_batched_tokens = b.max_num_seqs + chunk;
  b.full_step_s = step(b.max_num_seqs, chunk);
  return b;
}

}  // namespace spillway
