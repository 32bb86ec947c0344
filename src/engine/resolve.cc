#include "engine/resolve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "admission/priors.h"
#include "config/config_error.h"
#include "executor/cost_model.h"
#include "sched/slo_budget.h"

namespace spillway {
namespace {

std::string Prefix(const std::string& origin) { return origin.empty() ? "" : origin + ": "; }

SchedulerConfig ResolveScheduler(const config::EngineSettings& s, const CostModel& cost,
                                 std::int32_t max_model_len, const std::string& origin,
                                 std::optional<SloBudgets>* budgets) {
  SchedulerConfig c;
  c.enable_chunked_prefill = *s.enable_chunked_prefill;
  c.policy = *s.scheduling == "priority" ? SchedulingPolicy::kPriority : SchedulingPolicy::kFcfs;
  c.priority_aging_s = *s.priority_aging_s;
  c.max_preemptions = static_cast<std::int32_t>(*s.max_preemptions);
  c.long_prefill_token_threshold =
      static_cast<std::int32_t>(s.long_prefill_token_threshold.value_or(0));
  if (*s.slo_budgets) {
    const std::int64_t context =
        std::min<std::int64_t>(*s.slo_budget_context_tokens, max_model_len);
    *budgets = DeriveSloBudgets(cost, kSloBudgetHeadroom * *s.tpot_slo_s, context);
    c.max_num_seqs = (*budgets)->max_num_seqs;
    c.max_num_batched_tokens = (*budgets)->max_num_batched_tokens;
  }
  // Explicit limits win over derived budgets.
  c.max_num_seqs = static_cast<std::int32_t>(s.max_num_seqs.value_or(c.max_num_seqs));
  c.max_num_batched_tokens =
      static_cast<std::int32_t>(s.max_num_batched_tokens.value_or(c.max_num_batched_tokens));
  if (!c.enable_chunked_prefill && c.long_prefill_token_threshold > 0) {
    // Long prompts are capped by chunking them: without chunks the threshold means nothing.
    throw config::ConfigError(Prefix(origin) +
                              "engine.long_prefill_token_threshold: needs enable_chunked_prefill "
                              "(set it to 0, or leave chunked prefill on)");
  }
  if (!c.enable_chunked_prefill && c.max_num_batched_tokens < max_model_len) {
    // Without chunking, a whole prompt must fit one step (vLLM enforces the same rule).
    if (s.max_num_batched_tokens) {
      throw config::ConfigError(
          Prefix(origin) + "engine.max_num_batched_tokens: must be >= max_model_len (" +
          std::to_string(max_model_len) + ") when enable_chunked_prefill is false");
    }
    c.max_num_batched_tokens = max_model_len;
  }
  return c;
}

// The default long-prefill threshold and chunk (kLongPrefillSloFraction) when none is set.
void DeriveLongPrefill(const config::EngineSettings& s, double idle_prefill_tokens_per_s,
                       SchedulerConfig* c) {
  if (s.long_prefill_token_threshold || !c->enable_chunked_prefill) {
    return;  // set (0 = off), or every prompt is prefilled in one step anyway
  }
  const double slo_tokens = kLongPrefillSloFraction * *s.ttft_slo_s * idle_prefill_tokens_per_s;
  c->long_prefill_token_threshold = static_cast<std::int32_t>(
      std::clamp(std::round(slo_tokens), static_cast<double>(c->max_num_batched_tokens), 1e9));
  c->long_prefill_max_chunk_tokens = std::max(1, c->max_num_batched_tokens / 2);
}

}  // namespace

std::string LongPrefillSummary(const SchedulerConfig& c) {
  if (c.long_prefill_token_threshold <= 0 || !c.enable_chunked_prefill) {
    return "";
  }
  return fmt::format("long prefills above {} prompt tokens (at most {} a step while others wait)",
                     c.long_prefill_token_threshold, c.long_prefill_chunk_tokens());
}

AdmissionPolicy PolicyOf(const config::EngineSettings& settings) {
  AdmissionPolicy p = AdmissionPolicy::kForecast;
  if (settings.policy) {
    ParseAdmissionPolicy(*settings.policy, &p);
  }
  return p;
}

EngineConfig ResolveEngine(const config::EngineSettings& given, const std::string& profile_dir,
                           const TenantLimits& tenants, const std::string& origin) {
  const config::EngineSettings s = config::Overlay(config::EngineDefaults(), given);
  EngineConfig e;
  try {
    e.profile = LoadProfileByName(*s.profile, profile_dir);
  } catch (const config::ConfigError& error) {
    const std::string where =
        s.profile_where.empty() ? Prefix(origin) + "engine.profile: " : s.profile_where;
    throw config::ConfigError(where + error.what());
  }
  const CostModel cost(e.profile);
  e.max_model_len = static_cast<std::int32_t>(s.max_model_len.value_or(e.profile.max_model_len));
  e.num_gpu_blocks =
      static_cast<std::int32_t>(s.num_gpu_blocks.value_or(e.profile.num_gpu_blocks()));
  e.propagate_cancellation = *s.propagate_cancellation;
  e.enable_prefix_caching = *s.enable_prefix_caching;
  e.tpot_slo_s = *s.tpot_slo_s;
  e.scheduler = ResolveScheduler(s, cost, e.max_model_len, origin, &e.slo_budgets);

  AdmissionConfig& a = e.admission;
  a.policy = PolicyOf(s);
  a.ttft_slo_s = *s.ttft_slo_s;
  a.kv_headroom = *s.kv_headroom;
  a.max_num_queued_reqs = *s.max_num_queued_reqs > 0
                              ? static_cast<std::int32_t>(*s.max_num_queued_reqs)
                              : DefaultMaxNumQueuedReqs(a.policy);
  a.max_num_queued_tokens = *s.max_num_queued_tokens;
  a.queue_deadline = s.queue_deadline;  // unset: deadlines under predictive only
  a.degrade_max_tokens = static_cast<std::int32_t>(*s.degrade_max_tokens);
  a.fair_share.min_share_ratio = *s.fair_share_min_ratio;
  a.fair_share.window_s = *s.fair_share_window_s;
  a.forecast_errors.quantile = *s.forecast_margin_quantile;
  a.request_deadline_s = *s.request_timeout_s;
  a.tenants = tenants;
  // Priors until the engine's own measurements arrive, at the context the budgets assume.
  const std::int64_t context =
      std::min<std::int64_t>(*s.slo_budget_context_tokens, e.max_model_len);
  a.estimator = EstimatorPriors(cost, e.scheduler, context);
  a.decode_step_s_by_batch = DecodeStepTimes(cost, e.scheduler.max_num_seqs, context);
  a.prefill_tokens_per_s_by_decodes = PrefillRates(cost, e.scheduler, context);
  a.prefill_overhead_per_prompt_s = e.profile.per_seq_overhead_s + e.profile.first_token_overhead_s;
  DeriveLongPrefill(s, a.prefill_tokens_per_s_by_decodes.front(), &e.scheduler);
  if (const std::int32_t threshold = e.scheduler.long_prefill_token_threshold;
      threshold > 0 && e.scheduler.enable_chunked_prefill) {
    a.long_prefill_token_threshold = threshold;
    a.long_prefill_step_share =
        std::min(1.0, static_cast<double>(e.scheduler.long_prefill_chunk_tokens()) /
                          e.scheduler.max_num_batched_tokens);
  }
  a.priority_aging_s =
      e.scheduler.policy == SchedulingPolicy::kPriority ? e.scheduler.priority_aging_s : 0.0;
  return e;
}

}  // namespace spillway
