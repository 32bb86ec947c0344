#pragma once
// The overload contract: every way Spillway refuses or fails a request for load, deadline or
// capacity, in one table. Each row is a stable reason token (the X-Overload-Reason header and
// the OpenAI error body's "code"), its HTTP status, the OpenAI error "type", whether a retry
// can succeed, what it means, and the Gateway API Inference Extension's
// x-llm-d-request-dropped-reason value where one applies. The server and the simulator (through
// engine/contract_status.h), the load generator's classifier, `spillway soak-check` and a docs
// check (tests/api/overload_contract_docs_test.cc against docs/serve.md) all read it.
//
// Statuses: 429 shed by policy (retry after Retry-After); 503 hard limit, draining or no
// capacity (retry later or elsewhere); 504 the server's deadline passed; 400 can never be
// served as asked (no retry helps).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spillway::api {

struct ContractRow {
  std::string_view reason;          ///< stable token, e.g. "queue_delay_exceeded"
  int http_status = 0;              ///< 429, 503, 504 or 400
  std::string_view error_type;      ///< OpenAI error type ("rate_limit_error", "overloaded", ...)
  bool retryable = false;           ///< a later retry (after Retry-After) can succeed
  std::string_view meaning;         ///< one sentence, as docs/serve.md says it
  std::string_view dropped_reason;  ///< x-llm-d-request-dropped-reason value, or empty
};

/// Every row, in documentation order.
const std::vector<ContractRow>& OverloadContract();
/// The row for `reason`, or nullptr for a token outside the contract.
const ContractRow* FindContractRow(std::string_view reason);
/// The headers (name, value) of a refusal for `reason`: Retry-After (whole seconds),
/// X-Overload-Reason, and the Gateway API Inference Extension's
/// x-llm-d-request-dropped-reason where the row gives one. The server and the gateway send
/// the same.
std::vector<std::pair<std::string, std::string>> ContractHeaders(std::string_view reason,
                                                                 double retry_after_s);
/// The row's status, or 503 for a token outside the contract (a load failure, never a 500).
int StatusOf(std::string_view reason);
/// Whether an endpoint's refusal with `status` and X-Overload-Reason `reason` says it was
/// overloaded (fair shedding counts its flow as contending): a contract row dropped as
/// saturated or TTL-expired, but fair_share (its flow yielded); or a 429 or 503 with a reason
/// outside the contract or none (an engine that does not say why). Not a tenant's quota, a
/// drain, a deadline or a request too large for it.
bool IsRefusalForLoad(int status, std::string_view reason);

}  // namespace spillway::api
