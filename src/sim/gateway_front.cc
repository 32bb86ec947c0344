#include "sim/gateway_front.h"

#include "sim/simulator.h"

namespace spillway {

GatewayFront::GatewayFront(const SimGateway& config, const EngineConfig& engine,
                           std::int32_t replicas)
    : router_(config.router), scrape_interval_s_(config.scrape_interval_s) {
  routing::EndpointPriors priors;
  const ServiceEstimatorConfig& est = engine.admission.estimator;
  priors.service_rate_rps =
      est.service_rate_prior_rps > 0 ? est.service_rate_prior_rps : priors.service_rate_rps;
  priors.prefill_tokens_per_s = est.prefill_tokens_per_s_prior > 0 ? est.prefill_tokens_per_s_prior
                                                                   : priors.prefill_tokens_per_s;
  priors.max_running = engine.scheduler.max_num_seqs;
  for (std::int32_t i = 0; i < replicas; ++i) {
    pool_.emplace_back("replica-" + std::to_string(i), /*exports_metrics=*/true, priors);
  }
}

GatewayFront::Routed GatewayFront::Route(std::int32_t prompt_tokens, std::int32_t priority,
                                         Seconds now) {
  ++ledger_.received;
  Routed out;
  out.route = router_.Route(routing::RouteRequest{prompt_tokens, priority}, pool_, now);
  if (!out.route.forwarded()) {
    ++ledger_.shed;
    return out;
  }
  routing::EndpointState& endpoint = pool_[static_cast<std::size_t>(out.route.endpoint)];
  out.alone = endpoint.QueueAhead(router_.Fresh(endpoint, now)) <= 0;
  endpoint.OnForward(now);
  ++ledger_.in_flight;
  return out;
}

void GatewayFront::OnEnded(std::uint32_t replica, Seconds now, Ending ending) {
  pool_[replica].OnFinish(now, ending == Ending::kCompleted);
  --ledger_.in_flight;
  ++(ending == Ending::kCompleted   ? ledger_.completed
     : ending == Ending::kCancelled ? ledger_.cancelled
                                    : ledger_.failed);
}

void GatewayFront::Scrape(const std::vector<std::unique_ptr<Engine>>& engines, Seconds now) {
  for (std::size_t i = 0; i < engines.size(); ++i) {
    const Engine& engine = *engines[i];
    pool_[i].OnScrape({engine.scheduler().num_waiting(), engine.scheduler().num_running(),
                       engine.blocks().usage()},
                      now);
  }
}

std::string GatewayFront::LedgerError(bool at_end) const {
  if (!ledger_.Balanced()) {
    return "gateway ledger does not balance: received " + std::to_string(ledger_.received) +
           ", shed " + std::to_string(ledger_.shed) + ", in flight " +
           std::to_string(ledger_.in_flight);
  }
  if (at_end && ledger_.in_flight != 0) {
    return "the gateway still counts requests in flight at the end";
  }
  return "";
}

}  // namespace spillway
