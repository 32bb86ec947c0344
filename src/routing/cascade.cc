#include "routing/cascade.h"

#include <array>

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

}  // namespace spillway::routing
