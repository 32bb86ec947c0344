#pragma once
// What GatewayHandler's two files share about one completion request on its way through the
// pools of its model's cascade (gateway_handler.cc: the door, the parse and the cascade;
// pool_attempts.cc: one pool's placement, wait, attempts and refusals). Internal to
// src/gateway/.

#include <optional>
#include <string>
#include <string_view>

#include "api/openai_types.h"
#include "gateway/gateway_handler.h"
#include "gateway/relay.h"

namespace spillway::gateway {

/// One completion request on its way through the pools of its model's cascade.
struct GatewayHandler::Exchange {
  net::HttpConnection& conn;
  const GatewayConfig& config;
  std::string model;  ///< the model asked for (the label of its replies in requests_total)
  routing::RouteRequest route;
  Seconds received_s = 0;
  Seconds slo_s = 0;  ///< the request's TTFT SLO
  RelayRequest relay;
  /// Set by OnPool: the endpoint's answer was a complete 200 it did not degrade (one the
  /// exact-result cache may keep).
  bool storable = false;
  std::string tenant;  ///< the key's tenant (the label of its 429s)
  /// Set by OnPool: an endpoint took the request (its answer, or part of it, was relayed).
  bool relayed = false;
  /// Set by OnPool: the tokens the relayed 200's usage reported (RelayRequest::want_usage).
  std::optional<std::int64_t> usage_tokens;

  /// Ends the request in exactly one ledger bucket, and counts the reply.
  void Finish(GatewayMetrics& m, metrics::Counter* bucket, unsigned status, std::string_view reason,
              std::string_view by) const {
    bucket->Inc();
    m.in_flight->Dec();
    m.requests_total->With({model, std::to_string(status), std::string(reason), std::string(by)})
        .Inc();
    if (status == 429) {
      m.tenant_refusals_total->With({tenant, std::string(reason)}).Inc();
    }
  }
};

/// A pool's refusal, not yet sent: an endpoint's, passed on as it sent it, or the gateway's own.
struct GatewayHandler::Refusal {
  std::optional<AttemptResult> endpoint;
  api::ApiError error;  ///< the gateway's own (when no endpoint's)
  Seconds retry_after_s = 0;
  metrics::Counter* bucket = nullptr;  ///< the ledger's: shed or failed
  std::string reason;                  ///< the overload-contract token (empty: none named)
};

}  // namespace spillway::gateway
