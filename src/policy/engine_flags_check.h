#pragma once
// The policy's engine flags checked against its engine's cost model (the profile named by
// model.profile: the shipped one, or what `spillway calibrate` fits): a step with the batch
// full (engine.max_num_seqs decodes) and the rest of the token budget
// (engine.max_num_batched_tokens) spent on a prefill chunk must fit the TPOT SLO, as the
// budgets `slo_budgets` derives (sched/slo_budget.h) do; and the profile's KV cache must hold
// that batch at the longest prompt. Pure: the profile is an argument.

#include <vector>

#include "config/profile.h"
#include "policy/policy.h"
#include "policy/policy_check.h"

namespace spillway::policy {

/// Errors: the full step modelled past slo.tpot_p95_s (naming max_num_seqs when its decodes
/// alone are, else max_num_batched_tokens); warnings: past kSloBudgetHeadroom of it (TPOT p95
/// then sits at the SLO), or max_num_seqs sequences at max_prompt_tokens of context needing
/// more KV blocks than the profile's GPU holds (preemptions under a full batch).
std::vector<Finding> CheckEngineFlags(const Policy& policy, const Profile& profile);

}  // namespace spillway::policy
