#include "api/overload_contract.h"

#include <fmt/format.h>

namespace spillway::api {

// dropped_reason values are llm-d-router's RequestDroppedReason constants
// (pkg/common/error: rejected-saturated, rejected-ttl-expired, rejected-shutting-down, ...).
const std::vector<ContractRow>& OverloadContract() {
  static const std::vector<ContractRow> rows = {
      {"rate_limited", 429, "rate_limit_error", true,
       "the tenant's token bucket is empty (X-RateLimit-Reset says when it refills)", ""},
      {"token_rate_limited", 429, "rate_limit_error", true,
       "the gateway: the tenant's token rate (prompt tokens + max_tokens a second) is spent", ""},
      {"retry_rate_limited", 429, "rate_limit_error", true,
       "the gateway: the tenant's retries (a request seen within the retry window) are over "
       "its retry rate",
       ""},
      {"rate_limiter_unavailable", 429, "rate_limit_error", true,
       "the gateway: the shared rate limiter (Redis) did not answer in time and the gateway "
       "fails closed",
       ""},
      {"queue_delay_exceeded", 429, "rate_limit_error", true,
       "predictive: the estimated queue delay plus prefill would pass the TTFT SLO",
       "rejected-saturated"},
      {"kv_saturation", 429, "rate_limit_error", true,
       "predictive: KV cache usage is above the headroom threshold", "rejected-saturated"},
      {"queue_delay_and_kv_saturation", 429, "rate_limit_error", true,
       "predictive: both of the above", "rejected-saturated"},
      {"deadline_unreachable", 429, "rate_limit_error", true,
       "predictive: the request could not finish before the server's request deadline at this "
       "load",
       "rejected-saturated"},
      {"fair_share", 429, "rate_limit_error", true,
       "admissible, but its flow (x-gateway-inference-fairness-id, else the tenant) is served "
       "above its share of the offered load while another flow is starved "
       "(admission.fair_share_min_ratio)",
       "rejected-saturated"},
      {"queue_deadline_exceeded", 429, "rate_limit_error", true,
       "admitted, then dropped at the queue head after its queue-ingress deadline, before any "
       "prefill",
       "rejected-ttl-expired"},
      {"queue_full", 503, "overloaded", true,
       "the waiting queue is at max_num_queued_reqs (tail-drop's hard limit)",
       "rejected-saturated"},
      {"queued_tokens_full", 503, "overloaded", true,
       "the waiting prompt tokens are at max_num_queued_tokens", "rejected-saturated"},
      {"draining", 503, "overloaded", true,
       "the server is shutting down: send new requests to another replica",
       "rejected-shutting-down"},
      {"no_endpoint", 503, "overloaded", true,
       "the gateway: no endpoint of the model's pool takes work (all down, ejected or draining)",
       ""},
      {"upstream_unavailable", 503, "overloaded", true,
       "the gateway: the endpoint failed (refused, reset or closed the connection) before its "
       "reply ended, and no other endpoint could be tried",
       ""},
      {"too_many_connections", 503, "overloaded", true,
       "the server is at max_connections (answered before the request is read)",
       "rejected-saturated"},
      {"preemption_limit", 503, "overloaded", true,
       "the engine preempted the request more often than max_preemptions allows", ""},
      {"request_timeout", 504, "timeout", false,
       "the server's request deadline (timeouts.request_timeout_s) passed; the work is aborted",
       ""},
      {"context_length_exceeded", 400, "invalid_request_error", false,
       "prompt plus max_tokens exceed the model's context length (max_model_len)", ""},
      {"kv_capacity_exceeded", 400, "invalid_request_error", false,
       "prompt plus max_tokens need more KV blocks than the whole cache has", ""},
      {"max_tokens_exceeds_deadline", 400, "invalid_request_error", false,
       "predictive: even an idle engine could not generate max_tokens (or prefill the prompt, "
       "param prompt) before the request deadline",
       ""},
  };
  return rows;
}

const ContractRow* FindContractRow(std::string_view reason) {
  for (const ContractRow& row : OverloadContract()) {
    if (row.reason == reason) {
      return &row;
    }
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> ContractHeaders(std::string_view reason,
                                                                 double retry_after_s) {
  std::vector<std::pair<std::string, std::string>> h = {
      {"Retry-After", fmt::format("{:.0f}", retry_after_s)},
      {"X-Overload-Reason", std::string(reason)}};
  if (const ContractRow* row = FindContractRow(reason);
      row != nullptr && !row->dropped_reason.empty()) {
    h.emplace_back("x-llm-d-request-dropped-reason", std::string(row->dropped_reason));
  }
  return h;
}

bool IsRefusalForLoad(int status, std::string_view reason) {
  const ContractRow* row = FindContractRow(reason);
  if (row == nullptr) {
    return status == 429 || status == 503;
  }
  return reason != "fair_share" && (row->dropped_reason == "rejected-saturated" ||
                                    row->dropped_reason == "rejected-ttl-expired");
}

int StatusOf(std::string_view reason) {
  const ContractRow* row = FindContractRow(reason);
  return row != nullptr ? row->http_status : 503;
}

}  // namespace spillway::api
