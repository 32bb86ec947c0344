#pragma once
// SLO-safe batch budgets: the largest running batch and per-step token budget whose modelled
// step time stays within a TPOT SLO, the way Sarathi-Serve (Agrawal et al., OSDI 2024, §4.3)
// sizes its token budget to the time-between-tokens SLO.
//
// Algorithm: with every running sequence at `context_tokens` of context,
//   max_num_seqs           = the largest B such that a step of B decodes plus a prefill chunk
//                            of `min_prefill_chunk` tokens fits in the SLO (so waiting requests
//                            can still start while the batch is full);
//   max_num_batched_tokens = B + the largest prefill chunk P with StepTime(B, P) <= SLO.
// Both are found by binary search over the cost model, which is monotone in B and P.

#include <cstdint>

#include "executor/cost_model.h"

namespace spillway {

/// SLO budgets target this fraction of the TPOT SLO: a request's TPOT averages steps whose
/// contexts and prefill chunks vary around the sizing point, so sizing at the SLO itself puts
/// half the requests over it (measured on seed-burst: p95 TPOT just over the SLO at 100%).
/// Shared by the simulator and the server so both size the same batch.
inline constexpr double kSloBudgetHeadroom = 0.9;

struct SloBudgets {
  std::int32_t max_num_seqs = 0;
  std::int32_t max_num_batched_tokens = 0;
  Seconds full_step_s = 0;  ///< modelled time of a step that uses both budgets
};

/// Budgets for `tpot_slo_s` (> 0). Returns {1, min_prefill_chunk + 1, ...} when even one
/// sequence misses the SLO (the SLO is unattainable on this profile; callers should warn).
SloBudgets DeriveSloBudgets(const CostModel& cost, Seconds tpot_slo_s, std::int64_t context_tokens,
                            std::int32_t min_prefill_chunk = 64, std::int32_t max_seqs_cap = 1024,
                            std::int32_t max_tokens_cap = 16384);

}  // namespace spillway
