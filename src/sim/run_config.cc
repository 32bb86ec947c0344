#include "sim/run_config.h"

#include <algorithm>
#include <cmath>

#include "admission/priors.h"
#include "config/yaml_reader.h"
#include "executor/cost_model.h"

namespace spillway {
namespace {

template <typename T>
std::optional<T> First(const std::optional<T>& a, const std::optional<T>& b) {
  return a ? a : b;
}

SchedulerConfig ResolveScheduler(const Scenario& sc, const RunOverrides& o, RunConfig* rc) {
  SchedulerConfig s;
  const ScenarioEngine& e = sc.engine;
  if (e.enable_chunked_prefill) {
    s.enable_chunked_prefill = *e.enable_chunked_prefill;
  }
  if (e.scheduling) {
    s.policy = *e.scheduling == "priority" ? SchedulingPolicy::kPriority : SchedulingPolicy::kFcfs;
  }
  if (e.priority_aging_s) {
    s.priority_aging_s = *e.priority_aging_s;
  }
  if (e.max_preemptions) {
    s.max_preemptions = *e.max_preemptions;
  }
  if (e.long_prefill_token_threshold) {
    s.long_prefill_token_threshold = *e.long_prefill_token_threshold;
  }
  if (rc->slo_budgets) {
    s.max_num_seqs = rc->slo_budgets->max_num_seqs;
    s.max_num_batched_tokens = rc->slo_budgets->max_num_batched_tokens;
  }
  if (auto v = First(o.max_num_seqs, e.max_num_seqs)) {
    s.max_num_seqs = *v;  // explicit limits win over derived budgets
  }
  if (auto v = First(o.max_num_batched_tokens, e.max_num_batched_tokens)) {
    s.max_num_batched_tokens = *v;
  }
  return s;
}

AdmissionConfig ResolveAdmission(const Scenario& sc, AdmissionPolicy policy, const RunOverrides& o,
                                 const RunConfig& rc) {
  AdmissionConfig a;
  a.policy = policy;
  const ScenarioAdmission& s = sc.admission;
  if (sc.slo.ttft_s) {
    a.ttft_slo_s = *sc.slo.ttft_s;
  } else if (policy == AdmissionPolicy::kPredictive) {
    throw config::ConfigError(sc.file + ": slo.ttft_s: the predictive policy needs a TTFT SLO");
  }
  if (s.kv_headroom) {
    a.kv_headroom = *s.kv_headroom;
  }
  a.queue_deadline = s.queue_deadline;  // unset: deadlines under predictive only
  if (s.degrade_max_tokens) {
    a.degrade_max_tokens = *s.degrade_max_tokens;
  }
  for (const auto& t : s.tenants) {
    a.tenants[t.name] = TenantLimit{t.rate_rps, t.burst};
  }
  a.max_num_queued_reqs = DefaultMaxNumQueuedReqs(policy);
  if (auto v = First(o.max_num_queued_reqs, s.max_num_queued_reqs)) {
    a.max_num_queued_reqs = *v;
  }
  if (auto v = First(o.max_num_queued_tokens, s.max_num_queued_tokens)) {
    a.max_num_queued_tokens = *v;
  }
  // Priors until the engine's own measurements arrive.
  a.estimator = EstimatorPriors(CostModel(rc.profile), rc.scheduler);
  return a;
}

}  // namespace

RunConfig ResolveRunConfig(const Scenario& sc, AdmissionPolicy policy,
                           const std::string& profile_dir, const RunOverrides& o,
                           double mean_context_tokens) {
  RunConfig rc;
  const std::string profile_name = First(o.profile, sc.engine.profile).value_or("seed-a100-7b");
  try {
    rc.profile = LoadProfileByName(profile_name, profile_dir);
  } catch (const config::ConfigError& e) {
    throw config::ConfigError(sc.file + ": engine.profile: " + e.what());
  }
  rc.num_gpu_blocks = sc.engine.num_gpu_blocks.value_or(rc.profile.num_gpu_blocks());
  rc.max_model_len = rc.profile.max_model_len;
  rc.propagate_cancellation =
      First(o.propagate_cancellation, sc.engine.propagate_cancellation).value_or(true);
  const bool derive =
      First(o.slo_budgets, sc.engine.slo_budgets).value_or(sc.slo.tpot_s.has_value());
  if (derive) {
    if (!sc.slo.tpot_s) {
      throw config::ConfigError(sc.file + ": engine.slo_budgets: needs slo.tpot_s");
    }
    const auto context =
        std::min<std::int64_t>(sc.engine.slo_budget_context_tokens.value_or(
                                   static_cast<std::int64_t>(std::lround(mean_context_tokens))),
                               rc.profile.max_model_len);
    rc.slo_budgets =
        DeriveSloBudgets(CostModel(rc.profile), kSloBudgetHeadroom * *sc.slo.tpot_s, context);
  }
  rc.scheduler = ResolveScheduler(sc, o, &rc);
  if (!rc.scheduler.enable_chunked_prefill &&
      rc.scheduler.max_num_batched_tokens < rc.profile.max_model_len) {
    // Without chunking, a whole prompt must fit one step (vLLM enforces the same rule).
    if (First(o.max_num_batched_tokens, sc.engine.max_num_batched_tokens)) {
      throw config::ConfigError(
          sc.file + ": engine.max_num_batched_tokens: must be >= max_model_len (" +
          std::to_string(rc.profile.max_model_len) + ") when enable_chunked_prefill is false");
    }
    rc.scheduler.max_num_batched_tokens = rc.profile.max_model_len;
  }
  rc.admission = ResolveAdmission(sc, policy, o, rc);
  return rc;
}

}  // namespace spillway
