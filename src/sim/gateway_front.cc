#include "sim/gateway_front.h"

#include <algorithm>

#include "api/overload_contract.h"
#include "engine/contract_status.h"
#include "routing/cascade.h"
#include "sim/simulator.h"

namespace spillway {
namespace {

std::vector<routing::EndpointState> Endpoints(const EngineConfig& engine, std::int32_t replicas,
                                              std::uint32_t first) {
  routing::EndpointPriors priors;
  const ServiceEstimatorConfig& est = engine.admission.estimator;
  priors.service_rate_rps =
      est.service_rate_prior_rps > 0 ? est.service_rate_prior_rps : priors.service_rate_rps;
  priors.prefill_tokens_per_s = est.prefill_tokens_per_s_prior > 0 ? est.prefill_tokens_per_s_prior
                                                                   : priors.prefill_tokens_per_s;
  priors.max_running = engine.scheduler.max_num_seqs;
  std::vector<routing::EndpointState> out;
  for (std::int32_t i = 0; i < replicas; ++i) {
    out.emplace_back("replica-" + std::to_string(first + static_cast<std::uint32_t>(i)),
                     /*exports_metrics=*/true, priors);
  }
  return out;
}

}  // namespace

GatewayFront::GatewayFront(const SimGateway& config, const std::vector<SimPool>& pools,
                           const EngineConfig& run)
    : ttft_slo_s_(config.router.ttft_slo_s),
      scrape_interval_s_(config.scrape_interval_s),
      probe_interval_s_(config.probe_interval_s) {
  const routing::PoolConfig settings{config.router, config.health, config.retry, config.queue,
                                     config.prediction};
  std::uint32_t first = 0;
  for (const SimPool& p : pools) {
    pools_.push_back(
        Slot{routing::Pool(Endpoints(p.engine.value_or(run), p.replicas, first), settings), first,
             p.fallbacks});
    first += static_cast<std::uint32_t>(p.replicas);
  }
}

GatewayFront::Slot& GatewayFront::SlotOf(std::uint32_t replica) {
  std::size_t k = 0;
  while (k + 1 < pools_.size() && replica >= pools_[k + 1].first) {
    ++k;
  }
  return pools_[k];
}

std::size_t GatewayFront::waiting() const {
  std::size_t n = 0;
  for (const Slot& s : pools_) {
    n += s.pool.waiting();
  }
  return n;
}

GatewayFront::Outcome GatewayFront::Forward(routing::Ticket ticket, std::int32_t prompt_tokens,
                                            std::int32_t priority, Seconds now,
                                            const TryReplica& try_replica) {
  ++ledger_.received;
  routing::Pool& pool = pools_.front().pool;
  pool.OnReceived(now);
  const routing::RouteRequest request{prompt_tokens, priority};
  const routing::Pool::Placement p = pool.Admit(ticket, request, now);
  if (p.kind == routing::Pool::Placement::Kind::kQueued) {
    ++ledger_.queued;
    Outcome out;
    out.queued = true;
    out.expires_s = p.expires_s;
    return out;
  }
  return Cascade(ticket, 0, request, Send(0, request, p.pick, now, try_replica), 0, now,
                 try_replica);
}

std::optional<GatewayFront::Dispatched> GatewayFront::DispatchNext(
    Seconds now, const std::function<TryReplica(routing::Ticket)>& try_for) {
  for (std::size_t k = 0; k < pools_.size(); ++k) {
    const std::optional<routing::Pool::Placement> p = pools_[k].pool.DispatchNext(now);
    if (!p.has_value()) {
      continue;
    }
    --ledger_.queued;
    Dispatched out;
    out.ticket = p->ticket;
    const TryReplica try_replica = try_for(p->ticket);
    out.outcome = Cascade(p->ticket, k, p->request, Send(k, p->request, p->pick, now, try_replica),
                          p->waited_s, now, try_replica);
    out.expired = p->kind == routing::Pool::Placement::Kind::kExpired && !out.outcome.forwarded &&
                  !out.outcome.queued && out.outcome.reason == "queue_deadline_exceeded";
    return out;
  }
  return std::nullopt;
}

void GatewayFront::EndWaiting(routing::Ticket ticket, Ending ending) {
  for (Slot& s : pools_) {
    if (s.pool.CancelWaiting(ticket)) {
      --ledger_.queued;
      ++(ending == Ending::kCancelled ? ledger_.cancelled : ledger_.failed);
      return;
    }
  }
}

GatewayFront::Outcome GatewayFront::Cascade(routing::Ticket ticket, std::size_t k,
                                            routing::RouteRequest request, Outcome out,
                                            Seconds elapsed_s, Seconds now,
                                            const TryReplica& try_replica) {
  // The chain of the model asked for: the first pool, then its fallbacks in order.
  const std::vector<std::int32_t>& fallbacks = pools_.front().fallbacks;
  std::size_t next = 0;  // the next fallback to try: the one after k in the chain
  if (k != 0) {
    const auto it = std::find(fallbacks.begin(), fallbacks.end(), static_cast<std::int32_t>(k));
    next = static_cast<std::size_t>(it - fallbacks.begin()) + 1;
  }
  while (!out.forwarded && !out.queued && next < fallbacks.size() &&
         routing::CascadesOn(out.reason)) {
    const std::optional<Seconds> budget =
        routing::CascadeBudget(request.ttft_slo_s.value_or(ttft_slo_s_), elapsed_s);
    if (!budget.has_value()) {
      break;
    }
    k = static_cast<std::size_t>(fallbacks[next++]);
    request.ttft_slo_s = budget;
    request.exclude.clear();
    elapsed_s = 0;  // the budget is what is left from now
    routing::Pool& pool = pools_[k].pool;
    pool.OnReceived(now);
    const routing::Pool::Placement p = pool.Admit(ticket, request, now);
    if (p.kind == routing::Pool::Placement::Kind::kQueued) {
      ++ledger_.queued;
      out = Outcome{};
      out.queued = true;
      out.expires_s = p.expires_s;
      out.pool = static_cast<std::int32_t>(k);
      return out;
    }
    out = Send(k, request, p.pick, now, try_replica);
  }
  if (out.forwarded) {
    ++ledger_.in_flight;
  } else if (!out.queued) {
    ++(out.shed ? ledger_.shed : ledger_.failed);
  }
  return out;
}

GatewayFront::Outcome GatewayFront::Send(std::size_t k, routing::RouteRequest request,
                                         routing::Pool::Pick pick, Seconds now,
                                         const TryReplica& try_replica) {
  routing::Pool& pool = pools_[k].pool;
  const std::uint32_t first = pools_[k].first;
  Outcome out;
  out.pool = static_cast<std::int32_t>(k);
  bool refused_by_replica = false;  // the last attempt's refusal, to pass on
  for (std::int32_t attempts = 0;;) {
    if (attempts > 0) {
      pick = pool.Route(request, now);
    }
    const routing::RouteDecision& d = pick.decision;
    if (!d.forwarded()) {
      if (refused_by_replica) {
        return out;  // no other endpoint: the replica's refusal is passed on
      }
      out.by_gateway = true;
      if (attempts > 0) {  // an unreachable replica and nowhere else to go
        out.status = api::StatusOf("upstream_unavailable");
        out.reason = "upstream_unavailable";
        out.retry_after_s = pool.DrainTime(now);
        return out;
      }
      out.shed = true;
      out.status = ContractStatus(d.reason);
      out.reason = ToString(d.reason);
      out.retry_after_s = d.retry_after_s;
      return out;
    }
    ++attempts;
    const auto local = static_cast<std::uint32_t>(d.endpoint);
    const Answer a = try_replica(first + local);
    out.replica = first + local;
    if (a.kind == Answer::Kind::kAccepted) {
      out.forwarded = true;
      out.alone = pick.alone;
      out.predicted_ttft_s = d.predicted_ttft_s;
      return out;
    }
    pool.OnFinish(local, now, false);
    if (a.kind == Answer::Kind::kRefused) {
      pool.OnSuccess(local);
      if (a.reason == "draining") {
        pool.OnDraining(local, now);
      }
      refused_by_replica = true;
      out.status = a.status;
      out.reason = a.reason;
      out.retry_after_s = a.retry_after_s;
    } else {
      pool.OnError(local, now);
      refused_by_replica = false;
    }
    if (!pool.MayRetry(&request, d.endpoint, attempts, now)) {
      if (!refused_by_replica) {
        out.by_gateway = true;
        out.status = api::StatusOf("upstream_unavailable");
        out.reason = "upstream_unavailable";
        out.retry_after_s = pool.DrainTime(now);
      }
      return out;
    }
  }
}

void GatewayFront::OnEnded(std::uint32_t replica, Seconds now, Ending ending) {
  Slot& s = SlotOf(replica);
  s.pool.OnFinish(replica - s.first, now, ending == Ending::kCompleted);
  --ledger_.in_flight;
  ++(ending == Ending::kCompleted   ? ledger_.completed
     : ending == Ending::kCancelled ? ledger_.cancelled
                                    : ledger_.failed);
}

void GatewayFront::Scrape(const std::vector<std::unique_ptr<Engine>>& engines, Seconds now,
                          const std::function<bool(std::size_t)>& answers) {
  for (Slot& s : pools_) {
    for (std::size_t i = 0; i < s.pool.size(); ++i) {
      const std::size_t r = s.first + i;
      if (!answers(r)) {
        continue;  // no answer: the last scrape ages towards staleness
      }
      const Engine& engine = *engines[r];
      s.pool.OnScrape(i,
                      {engine.scheduler().num_waiting(), engine.scheduler().num_running(),
                       engine.blocks().usage()},
                      now);
    }
  }
}

void GatewayFront::Probe(Seconds now,
                         const std::function<routing::ProbeResult(std::size_t)>& probe) {
  for (Slot& s : pools_) {
    for (std::size_t i = 0; i < s.pool.size(); ++i) {
      s.pool.OnProbe(i, probe(s.first + i), now);
    }
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
