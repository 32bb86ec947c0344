#include "policy/engine_flags_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "config/engine_settings.h"
#include "executor/cost_model.h"
#include "sched/slo_budget.h"

namespace spillway::policy {
namespace {

std::string WhereOf(const Policy& p, std::string_view path) {
  const Value* v = p.Find(path);
  return v != nullptr ? v->where : p.file + ": " + std::string(path) + ": ";
}

}  // namespace

std::vector<Finding> CheckEngineFlags(const Policy& p, const Profile& profile) {
  std::vector<Finding> out;
  const auto seqs = p.Number("engine.max_num_seqs");
  const auto tokens = p.Number("engine.max_num_batched_tokens");
  const auto tpot = p.Number("slo.tpot_p95_s");
  if (!seqs || !tokens || !tpot) {
    return out;
  }
  const CostModel cost(profile);
  const std::int64_t context = std::min<std::int64_t>(
      config::EngineDefaults().slo_budget_context_tokens.value_or(512), profile.max_model_len);
  const auto batch = static_cast<std::int32_t>(*seqs);
  const auto chunk = static_cast<std::int32_t>(std::max(0.0, *tokens - *seqs));
  const Seconds decodes_s = cost.StepTime(batch, context, 0);
  const Seconds full_s = cost.StepTime(batch, context, chunk);
  const std::string on =
      fmt::format("modelled on profile {} at {} tokens of context", profile.name, context);
  if (decodes_s > *tpot) {
    out.push_back({Severity::kError, WhereOf(p, "engine.max_num_seqs"),
                   fmt::format("a step of {} decodes takes {:.1f} ms ({}), past the TPOT SLO "
                               "({:.1f} ms): lower max_num_seqs",
                               batch, decodes_s * 1e3, on, *tpot * 1e3)});
  } else if (full_s > *tpot) {
    out.push_back({Severity::kError, WhereOf(p, "engine.max_num_batched_tokens"),
                   fmt::format("a step of {} decodes and a {}-token prefill chunk takes {:.1f} ms "
                               "({}), past the TPOT SLO ({:.1f} ms): lower "
                               "max_num_batched_tokens",
                               batch, chunk, full_s * 1e3, on, *tpot * 1e3)});
  } else if (full_s > kSloBudgetHeadroom * *tpot) {
    out.push_back({Severity::kWarning, WhereOf(p, "engine.max_num_batched_tokens"),
                   fmt::format("a full step takes {:.1f} ms ({}), past {:.0f}% of the TPOT SLO "
                               "({:.1f} ms): p95 TPOT will sit at the SLO",
                               full_s * 1e3, on, kSloBudgetHeadroom * 100, *tpot * 1e3)});
  }
  if (const auto prompt = p.Number("model.max_prompt_tokens")) {
    const double blocks_each = std::ceil(*prompt / profile.block_size);
    const std::int32_t pool = profile.num_gpu_blocks();
    if (blocks_each * *seqs > pool) {
      out.push_back({Severity::kWarning, WhereOf(p, "engine.max_num_seqs"),
                     fmt::format("{} sequences at the longest prompt ({} tokens) need {:.0f} KV "
                                 "blocks, more than the {} profile {} holds: a full batch of "
                                 "long prompts preempts",
                                 batch, *prompt, blocks_each * *seqs, pool, profile.name)});
    }
  }
  return out;
}

}  // namespace spillway::policy
