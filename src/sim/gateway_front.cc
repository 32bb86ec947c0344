#include "sim/gateway_front.h"

#include "api/overload_contract.h"
#include "engine/contract_status.h"
#include "sim/simulator.h"

namespace spillway {
namespace {

std::vector<routing::EndpointState> Endpoints(const EngineConfig& engine, std::int32_t replicas) {
  routing::EndpointPriors priors;
  const ServiceEstimatorConfig& est = engine.admission.estimator;
  priors.service_rate_rps =
      est.service_rate_prior_rps > 0 ? est.service_rate_prior_rps : priors.service_rate_rps;
  priors.prefill_tokens_per_s = est.prefill_tokens_per_s_prior > 0 ? est.prefill_tokens_per_s_prior
                                                                   : priors.prefill_tokens_per_s;
  priors.max_running = engine.scheduler.max_num_seqs;
  std::vector<routing::EndpointState> out;
  for (std::int32_t i = 0; i < replicas; ++i) {
    out.emplace_back("replica-" + std::to_string(i), /*exports_metrics=*/true, priors);
  }
  return out;
}

}  // namespace

GatewayFront::GatewayFront(const SimGateway& config, const EngineConfig& engine,
                           std::int32_t replicas)
    : pool_(Endpoints(engine, replicas),
            {config.router, config.health, config.retry, config.queue, config.prediction}),
      scrape_interval_s_(config.scrape_interval_s),
      probe_interval_s_(config.probe_interval_s) {}

GatewayFront::Outcome GatewayFront::Forward(routing::Ticket ticket, std::int32_t prompt_tokens,
                                            std::int32_t priority, Seconds now,
                                            const TryReplica& try_replica) {
  ++ledger_.received;
  pool_.OnReceived(now);
  const routing::RouteRequest request{prompt_tokens, priority};
  const routing::Pool::Placement p = pool_.Admit(ticket, request, now);
  if (p.kind == routing::Pool::Placement::Kind::kQueued) {
    ++ledger_.queued;
    Outcome out;
    out.queued = true;
    out.expires_s = p.expires_s;
    return out;
  }
  return Send(request, p.pick, now, try_replica);
}

std::optional<GatewayFront::Dispatched> GatewayFront::DispatchNext(
    Seconds now, const std::function<TryReplica(routing::Ticket)>& try_for) {
  const std::optional<routing::Pool::Placement> p = pool_.DispatchNext(now);
  if (!p.has_value()) {
    return std::nullopt;
  }
  --ledger_.queued;
  Dispatched out;
  out.ticket = p->ticket;
  out.expired = p->kind == routing::Pool::Placement::Kind::kExpired;
  out.outcome = Send(p->request, p->pick, now, try_for(p->ticket));
  return out;
}

void GatewayFront::EndWaiting(routing::Ticket ticket, Ending ending) {
  if (pool_.CancelWaiting(ticket)) {
    --ledger_.queued;
    ++(ending == Ending::kCancelled ? ledger_.cancelled : ledger_.failed);
  }
}

GatewayFront::Outcome GatewayFront::Send(routing::RouteRequest request, routing::Pool::Pick pick,
                                         Seconds now, const TryReplica& try_replica) {
  Outcome out;
  bool refused_by_replica = false;  // the last attempt's refusal, to pass on
  for (std::int32_t attempts = 0;;) {
    if (attempts > 0) {
      pick = pool_.Route(request, now);
    }
    const routing::RouteDecision& d = pick.decision;
    if (!d.forwarded()) {
      if (refused_by_replica) {
        break;  // no other endpoint: the replica's refusal is passed on
      }
      out.by_gateway = true;
      if (attempts > 0) {  // an unreachable replica and nowhere else to go
        out.status = api::StatusOf("upstream_unavailable");
        out.reason = "upstream_unavailable";
        out.retry_after_s = pool_.DrainTime(now);
        ++ledger_.failed;
        return out;
      }
      out.status = ContractStatus(d.reason);
      out.reason = ToString(d.reason);
      out.retry_after_s = d.retry_after_s;
      ++ledger_.shed;
      return out;
    }
    ++attempts;
    const auto r = static_cast<std::uint32_t>(d.endpoint);
    const Answer a = try_replica(r);
    out.replica = r;
    if (a.kind == Answer::Kind::kAccepted) {
      out.forwarded = true;
      out.alone = pick.alone;
      out.predicted_ttft_s = d.predicted_ttft_s;
      ++ledger_.in_flight;
      return out;
    }
    pool_.OnFinish(r, now, false);
    if (a.kind == Answer::Kind::kRefused) {
      pool_.OnSuccess(r);
      if (a.reason == "draining") {
        pool_.OnDraining(r, now);
      }
      refused_by_replica = true;
      out.status = a.status;
      out.reason = a.reason;
      out.retry_after_s = a.retry_after_s;
    } else {
      pool_.OnError(r, now);
      refused_by_replica = false;
    }
    if (!pool_.MayRetry(&request, d.endpoint, attempts, now)) {
      if (!refused_by_replica) {
        out.by_gateway = true;
        out.status = api::StatusOf("upstream_unavailable");
        out.reason = "upstream_unavailable";
        out.retry_after_s = pool_.DrainTime(now);
      }
      break;
    }
  }
  ++ledger_.failed;
  return out;
}

void GatewayFront::OnEnded(std::uint32_t replica, Seconds now, Ending ending) {
  pool_.OnFinish(replica, now, ending == Ending::kCompleted);
  --ledger_.in_flight;
  ++(ending == Ending::kCompleted   ? ledger_.completed
     : ending == Ending::kCancelled ? ledger_.cancelled
                                    : ledger_.failed);
}

void GatewayFront::Scrape(const std::vector<std::unique_ptr<Engine>>& engines, Seconds now,
                          const std::function<bool(std::size_t)>& answers) {
  for (std::size_t i = 0; i < engines.size(); ++i) {
    if (!answers(i)) {
      continue;  // no answer: the last scrape ages towards staleness
    }
    const Engine& engine = *engines[i];
    pool_.OnScrape(i,
                   {engine.scheduler().num_waiting(), engine.scheduler().num_running(),
                    engine.blocks().usage()},
                   now);
  }
}

void GatewayFront::Probe(Seconds now,
                         const std::function<routing::ProbeResult(std::size_t)>& probe) {
  for (std::size_t i = 0; i < pool_.size(); ++i) {
    pool_.OnProbe(i, probe(i), now);
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
