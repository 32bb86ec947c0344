#pragma once
// Helpers shared by the routing tests (one unity batch: names at file scope are unique).

#include "routing/endpoint_state.h"

namespace spillway::routing_test {

/// 10 completions/s, 4000 prefill tokens/s, a batch of 4: round numbers for hand-checked
/// predictions.
inline routing::EndpointPriors Priors() {
  return {.service_rate_rps = 10, .prefill_tokens_per_s = 4000, .max_running = 4};
}

}  // namespace spillway::routing_test
