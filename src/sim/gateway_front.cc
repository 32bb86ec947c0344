#include "sim/gateway_front.h"

#include <algorithm>

#include "api/overload_contract.h"
#include "core/check.h"
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
  const routing::PoolConfig settings{config.router, config.health,     config.retry,
                                     config.queue,  config.prediction, config.fair_share};
  std::uint32_t first = 0;
  for (const SimPool& p : pools) {
    pools_.push_back(
        Slot{routing::Pool(Endpoints(p.engine.value_or(run), p.replicas, first), settings), first});
    first += static_cast<std::uint32_t>(p.replicas);
  }
  // The cascade of the first pool's model (the one every request asks for), its stages naming
  // pools by index.
  if (!pools.empty()) {
    std::vector<std::size_t> chain = {0};
    std::vector<routing::DegradeConfig> degrade = {pools.front().degrade};
    for (const std::int32_t f : pools.front().fallbacks) {
      chain.push_back(static_cast<std::size_t>(f));
      degrade.push_back(pools[static_cast<std::size_t>(f)].degrade);
    }
    stages_ = routing::PlanCascade(config.cascade_order, degrade, /*cascade=*/true);
    for (routing::CascadeStage& stage : stages_) {
      stage.pool = chain[stage.pool];
    }
  }
  if (config.cache.enabled()) {
    cache_ = std::make_unique<routing::ResultCache>(config.cache);
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

GatewayFront::Outcome GatewayFront::Forward(routing::Ticket ticket, const Prompt& prompt,
                                            std::int32_t max_tokens, std::int32_t priority,
                                            std::string_view flow, std::string cache_key,
                                            Seconds now, const TryReplica& try_replica) {
  ++ledger_.received;
  Asked asked{now, max_tokens, routing::RouteRequest{prompt.tokens, priority}};
  asked.route.flow = flow;
  // Hashed at the first pool's settings: every stage of the cascade matches the same blocks.
  asked.route.prefix_blocks = routing::PromptPrefixBlocks(
      pools_.front().pool.router().config().prefix, prompt.segments, prompt.tokens);
  if (cache_ != nullptr) {
    asked.cache_key = std::move(cache_key);
  }
  return Offer(ticket, 0, std::move(asked), std::nullopt, now, try_replica);
}

void GatewayFront::StoreAnswer(const std::string& key, Seconds now) {
  if (cache_ != nullptr) {
    cache_->Store(key, routing::CachedAnswer{"text/event-stream", {}, true}, now);
  }
}

std::optional<GatewayFront::Dispatched> GatewayFront::DispatchNext(
    Seconds now, const std::function<TryReplica(routing::Ticket)>& try_for) {
  for (Slot& slot : pools_) {
    const std::optional<routing::Pool::Placement> p = slot.pool.DispatchNext(now);
    if (!p.has_value()) {
      continue;
    }
    --ledger_.queued;
    const auto w = waiting_.find(p->ticket);
    SPILLWAY_CHECK(w != waiting_.end());
    const Waiting at = w->second;
    waiting_.erase(w);
    Dispatched out;
    out.ticket = p->ticket;
    out.outcome = Offer(p->ticket, at.stage, at.asked, p, now, try_for(p->ticket));
    out.expired = p->kind == routing::Pool::Placement::Kind::kExpired && !out.outcome.forwarded &&
                  !out.outcome.queued && out.outcome.reason == "queue_deadline_exceeded";
    return out;
  }
  return std::nullopt;
}

void GatewayFront::EndWaiting(routing::Ticket ticket, Ending ending) {
  for (Slot& s : pools_) {
    if (s.pool.CancelWaiting(ticket)) {
      waiting_.erase(ticket);
      --ledger_.queued;
      ++(ending == Ending::kCancelled ? ledger_.cancelled : ledger_.failed);
      return;
    }
  }
}

GatewayFront::Outcome GatewayFront::Offer(routing::Ticket ticket, std::size_t s, Asked asked,
                                          std::optional<routing::Pool::Placement> left, Seconds now,
                                          const TryReplica& try_replica) {
  Outcome out;
  bool tried = left.has_value();  // a pool stage was offered the request
  for (; s < stages_.size(); ++s) {
    const routing::CascadeStage& stage = stages_[s];
    if (stage.step == routing::CascadeStep::kCache) {
      if (!asked.cache_key.empty() && !asked.looked_up) {
        if (cache_->Find(asked.cache_key, now).has_value()) {
          ++ledger_.completed;
          out = Outcome{};
          out.cached = true;
          return out;
        }
        asked.looked_up = true;
      }
      continue;
    }
    routing::Pool& pool = pools_[stage.pool].pool;
    routing::Pool::Pick pick;
    if (left.has_value()) {  // it left stage s's queue
      pick = left->pick;
      asked.route = left->request;
      left.reset();
    } else {
      if (tried) {  // what is left of the TTFT budget, after the stages before
        const std::optional<Seconds> budget =
            routing::CascadeBudget(ttft_slo_s_, now - asked.received_s);
        if (!budget.has_value() || !routing::CascadesOn(out.reason)) {
          break;
        }
        asked.route.ttft_slo_s = *budget * stage.slo_fraction;
        asked.route.exclude.clear();  // every endpoint again, as the live gateway
      } else if (stage.slo_fraction < 1) {
        asked.route.ttft_slo_s = ttft_slo_s_ * stage.slo_fraction;
      }
      if (std::none_of(stages_.begin(), stages_.begin() + static_cast<std::ptrdiff_t>(s),
                       [&](const routing::CascadeStage& e) {
                         return e.step != routing::CascadeStep::kCache && e.pool == stage.pool;
                       })) {
        pool.OnReceived(now);  // its first offer to this pool
      }
      asked.route.may_wait = stage.may_wait;
      const routing::Pool::Placement p = pool.Admit(ticket, asked.route, now);
      if (p.kind == routing::Pool::Placement::Kind::kQueued) {
        ++ledger_.queued;
        waiting_[ticket] = Waiting{s, asked};
        out = Outcome{};
        out.queued = true;
        out.expires_s = p.expires_s;
        out.pool = static_cast<std::int32_t>(stage.pool);
        return out;
      }
      pick = p.pick;
    }
    const std::int32_t clamp =
        routing::ClampedMaxTokens(asked.max_tokens, stage.clamp_max_tokens).value_or(0);
    out = Send(stage.pool, asked.route, pick, clamp, now, try_replica);
    tried = true;
    if (out.forwarded) {
      out.clamped_max_tokens = clamp;
      out.storable = !asked.cache_key.empty() && stage.step == routing::CascadeStep::kPrimary;
      break;
    }
  }
  if (out.forwarded) {
    ++ledger_.in_flight;
  } else {
    ++(out.shed ? ledger_.shed : ledger_.failed);
  }
  return out;
}

GatewayFront::Outcome GatewayFront::Send(std::size_t k, routing::RouteRequest request,
                                         routing::Pool::Pick pick, std::int32_t clamp, Seconds now,
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
    const Answer a = try_replica(first + local, clamp);
    out.replica = first + local;
    if (a.kind == Answer::Kind::kAccepted) {
      out.forwarded = true;
      out.alone = pick.alone;
      out.predicted_ttft_s = d.predicted_ttft_s;
      return out;
    }
    pool.OnFinish(local, now, false);
    pool.OnNotStarted(local, request);
    if (a.kind == Answer::Kind::kRefused) {
      pool.OnSuccess(local);
      pool.OnEndpointRefused(request.flow, api::IsRefusalForLoad(a.status, a.reason), now);
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
      // What spillway serve's /metrics would say: its queue, KV, (forecast policy) the
      // engine's forecast of the wait (spillway_ttft_forecast_queue_seconds) and whether it
      // caches prefixes (vllm:cache_config_info).
      s.pool.OnScrape(i,
                      {engine.scheduler().num_waiting(), engine.scheduler().num_running(),
                       engine.blocks().usage(), engine.QueueForecast(now),
                       engine.config().enable_prefix_caching},
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
