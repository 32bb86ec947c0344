#include "routing/cascade.h"

#include <algorithm>
#include <array>
#include <utility>

namespace spillway::routing {

bool CascadesOn(std::string_view reason) {
  constexpr std::array<std::string_view, 5> kStays = {
      "rate_limited", "request_timeout", "context_length_exceeded", "kv_capacity_exceeded",
      "max_tokens_exceeds_deadline"};
  for (const std::string_view s : kStays) {
    if (reason == s) {
      return false;
    }
  }
  return true;
}

std::optional<Seconds> CascadeBudget(Seconds slo_s, Seconds elapsed_s) {
  const Seconds left = slo_s - elapsed_s;
  if (!(left >= kMinCascadeBudgetS)) {
    return std::nullopt;
  }
  return left;
}

namespace {
constexpr std::array<std::pair<CascadeStep, std::string_view>, 5> kStepNames = {{
    {CascadeStep::kCache, "cache"},
    {CascadeStep::kPrimary, "primary"},
    {CascadeStep::kClamp, "clamp"},
    {CascadeStep::kFallback, "fallback"},
    {CascadeStep::kReject, "reject"},
}};
}  // namespace

bool ParseCascadeStep(std::string_view name, CascadeStep* out) {
  for (const auto& [step, n] : kStepNames) {
    if (name == n) {
      *out = step;
      return true;
    }
  }
  return false;
}

std::string_view ToString(CascadeStep step) {
  for (const auto& [s, n] : kStepNames) {
    if (s == step) {
      return n;
    }
  }
  return "?";
}

std::vector<CascadeStep> DefaultCascadeOrder() {
  return {CascadeStep::kCache, CascadeStep::kPrimary, CascadeStep::kClamp, CascadeStep::kFallback,
          CascadeStep::kReject};
}

std::string CascadeOrderError(const std::vector<CascadeStep>& order) {
  const auto primary = std::find(order.begin(), order.end(), CascadeStep::kPrimary);
  if (primary == order.end()) {
    return "the order names primary (the model's own pool)";
  }
  if (std::find(order.begin(), primary, CascadeStep::kClamp) != primary ||
      std::find(order.begin(), primary, CascadeStep::kFallback) != primary) {
    return "clamp and fallback come after primary (the model asked for is offered the request "
           "first)";
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (std::count(order.begin(), order.end(), order[i]) > 1) {
      return std::string("the step ") + std::string(ToString(order[i])) + " is named twice";
    }
    if (order[i] == CascadeStep::kReject && i + 1 != order.size()) {
      return "reject ends the order (no step after it is ever reached)";
    }
  }
  return {};
}

std::vector<CascadeStage> PlanCascade(const std::vector<CascadeStep>& order,
                                      const std::vector<DegradeConfig>& chain, bool cascade) {
  std::vector<CascadeStage> stages;
  std::vector<std::size_t> stepped;  // the chain's pools offered the request as asked so far
  for (const CascadeStep step : order) {
    if (step == CascadeStep::kReject) {
      break;
    }
    if (step == CascadeStep::kCache) {
      stages.push_back({step, 0});
    } else if (step == CascadeStep::kPrimary && !chain.empty()) {
      stages.push_back({step, 0});
      stepped.push_back(0);
    } else if (step == CascadeStep::kFallback && cascade) {
      for (std::size_t k = 1; k < chain.size(); ++k) {
        stages.push_back({step, k});
        stepped.push_back(k);
      }
    } else if (step == CascadeStep::kClamp) {
      for (const std::size_t k : stepped) {
        if (chain[k].max_tokens > 0) {
          stages.push_back({step, k, chain[k].max_tokens});
        }
      }
    }
  }
  // A stage followed by another of the same pool takes only what it can start below the pool's
  // load threshold, and does not wait.
  const auto pool_stage = [&](std::size_t i) { return stages[i].step != CascadeStep::kCache; };
  for (std::size_t i = 0; i < stages.size(); ++i) {
    for (std::size_t j = i + 1; j < stages.size() && pool_stage(i); ++j) {
      if (pool_stage(j) && stages[j].pool == stages[i].pool) {
        stages[i].may_wait = false;
        stages[i].slo_fraction = chain[stages[i].pool].ttft_fraction;
        break;
      }
    }
  }
  return stages;
}

std::optional<std::int32_t> ClampedMaxTokens(std::optional<std::int32_t> asked,
                                             std::int32_t clamp) {
  if (clamp <= 0 || (asked.has_value() && *asked <= clamp)) {
    return std::nullopt;
  }
  return clamp;
}

}  // namespace spillway::routing
