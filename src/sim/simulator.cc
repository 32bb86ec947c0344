#include "sim/simulator.h"

#include <algorithm>
#include <cmath>

#include "config/config_error.h"
#include "engine/contract_status.h"
#include "report/objectives.h"
#include "report/scenario_recording.h"
#include "sim/sim_run.h"

namespace spillway {
namespace sim_detail {

std::int32_t ReplicasOf(const SimOptions& opt) {
  std::int32_t n = 0;
  for (const SimPool& p : opt.pools) {
    n += p.replicas;
  }
  return opt.pools.empty() ? opt.replicas : n;
}

AdmissionConfig DoorConfig(const AdmissionConfig& a) {
  AdmissionConfig door;
  door.policy = AdmissionPolicy::kUnbounded;
  door.tenants = a.tenants;
  return door;
}

Sim::Sim(const Scenario& sc, const RunConfig& rc, const SimOptions& opt)
    : sc_(sc),
      rc_(rc),
      opt_(opt),
      rng_(opt.seed ^ 0x5EEDC0FFEEULL),
      arrivals_(GenerateArrivals(sc, opt.seed)),
      door_(DoorConfig(rc.admission), 0),
      recorder_(SloOf(sc), PhasesOf(sc)),
      retry_(sc.client),
      checker_(opt.invariant_checks),
      faults_(opt.faults, ReplicasOf(opt)),
      pools_(opt.pools.empty() ? std::vector<SimPool>{SimPool{"", opt.replicas, std::nullopt, {}}}
                               : opt.pools) {
  for (std::size_t k = 0; k < pools_.size(); ++k) {
    EngineConfig per_replica = pools_[k].engine.value_or(rc);
    per_replica.admission.tenants.clear();  // the door in front of the replicas keeps them
    for (std::int32_t i = 0; i < pools_[k].replicas; ++i) {
      replicas_.push_back(std::make_unique<Engine>(per_replica, 0));
      replica_pool_.push_back(static_cast<std::int32_t>(k));
    }
  }
  if (opt.gateway.has_value()) {
    gateway_.emplace(*opt.gateway, pools_, rc);
  }
  if (arrivals_.empty()) {
    throw config::ConfigError(sc.file + ": arrival: the scenario produces no arrivals");
  }
  logical_.reserve(arrivals_.size());
  attempts_.reserve(arrivals_.size());
}

std::optional<std::uint32_t> Sim::PickReplica() const {
  std::optional<std::uint32_t> best;
  std::int64_t best_load = INT64_MAX;
  // The first pool only: the clients ask for its model, and the cascade is the gateway's.
  for (std::uint32_t i = 0; i < replicas_.size() && replica_pool_[i] == 0; ++i) {
    if (!faults_.up(i)) {
      continue;  // the oracle knows at once which replicas are gone or draining
    }
    const Scheduler& s = replicas_[i]->scheduler();
    const std::int64_t load = s.num_waiting() + s.num_running();
    if (load < best_load) {
      best = i;
      best_load = load;
    }
  }
  return best;
}

void Sim::SendAttempt(std::uint32_t logical, Seconds now) {
  Logical& l = logical_[logical];
  const Arrival& a = arrivals_[l.arrival];
  recorder_.OnOffered(now, l.attempts == 0, ClassName(a));
  ++l.attempts;
  const EngineRequest request = RequestOf(logical);
  // The tenant's bucket first, from the request's head, as the server and the gateway decide
  // it before reading the body; then what can never be served, before any engine work.
  AdmissionDecision d =
      door_.DecideRateLimit(AdmissionRequest{a.tenant, a.prompt_tokens, a.max_tokens}, now);
  if (!d.admitted()) {
    // (Without a gateway the refusal names the replica the request would have gone to.)
    const std::uint32_t to = gateway_.has_value() ? 0 : PickReplica().value_or(0);
    OnRejected(logical, static_cast<std::int32_t>(to), now, HttpStatus(d), ToString(d.reason),
               d.retry_after_s, now);
    return;
  }
  if (const AdmissionDecision fits = replicas_.front()->CheckFits(request); !fits.admitted()) {
    OnRejected(logical, 0, now, HttpStatus(fits), ToString(fits.reason), 0, now);
    return;
  }
  const auto id = static_cast<std::uint32_t>(attempts_.size());
  std::uint32_t r = 0;
  bool alone = false;
  bool clamped = false;   // by the gateway's cascade
  bool storable = false;  // its answer goes into the gateway's cache
  Seconds predicted_ttft_s = 0;
  if (gateway_.has_value()) {
    const GatewayFront::Outcome out =
        gateway_->Forward(id, {a.prompt_tokens, a.prompt_segments}, request.max_tokens, a.priority,
                          request.fairness_id.empty() ? request.tenant : request.fairness_id,
                          CacheKey(a), now, TryReplicaFor(id, request, now, &d));
    if (out.cached) {  // answered at once, by no engine
      recorder_.OnAdmitted(now, now, false, ClassName(a));
      recorder_.OnRequestDone({RequestOutcome::Kind::kCompleted, now, now, now,
                               a.generated_tokens(), FirstModel(), /*cached=*/true},
                              ClassName(a));
      if (recording()) {
        AttemptRecord r = RecordOf(logical, l.attempts, now);
        r.head_s = r.first_token_s = r.finished_s = now;
        r.output_tokens = a.generated_tokens();
        r.status = 200;
        r.served_model = std::string(FirstModel());
        r.cache_hit = true;
        opt_.on_record(r);
      }
      return;
    }
    if (out.queued) {  // waits at the gateway; its client's clocks run from now
      attempts_.push_back(Attempt{logical, 0, now});
      attempts_.back().at_gateway = true;
      attempts_.back().attempt = l.attempts;
      ArmTimeouts(id, now);
      Push(out.expires_s, EventType::kWaitEnds, id);
      return;
    }
    if (!out.forwarded) {
      // The gateway's own refusal is for the pool: its Retry-After is checked against the
      // shortest of the replicas' drains.
      OnRejected(logical, out.by_gateway ? kAnyQueue : static_cast<std::int32_t>(out.replica), now,
                 out.status, out.reason, out.retry_after_s, now);
      return;
    }
    r = out.replica;
    alone = out.alone;
    predicted_ttft_s = out.predicted_ttft_s;
    clamped = out.clamped_max_tokens > 0;
    storable = out.storable;
  } else {
    const std::optional<std::uint32_t> picked = PickReplica();
    if (!picked.has_value()) {
      OnRejected(logical, 0, now, 503, "no_endpoint", 1, now);
      return;
    }
    r = *picked;
    d = replicas_[r]->Offer(id, request, now);
    if (!d.admitted()) {
      OnRejected(logical, static_cast<std::int32_t>(r), now, HttpStatus(d), ToString(d.reason),
                 d.retry_after_s, now);
      return;
    }
  }
  attempts_.push_back(Attempt{logical, r, now});
  if (gateway_.has_value() && storable) {
    attempts_.back().cache_key = CacheKey(a);
  }
  attempts_.back().alone = alone;
  attempts_.back().attempt = l.attempts;
  attempts_.back().degraded = clamped || d.verdict == Verdict::kDegrade;
  attempts_.back().forwarded_s = now;
  attempts_.back().predicted_ttft_s = predicted_ttft_s;
  if (d.ttft_forecast_s >= 0 && std::isfinite(d.ttft_forecast_s)) {
    // The forecast policy's own prediction, what it admitted on.
    attempts_.back().engine_predicted_ttft_s = d.ttft_forecast_s;
    attempts_.back().admission_estimated_ttft_s = d.ttft_forecast_s;
    attempts_.back().ttft_forecast_s = d.ttft_forecast_s;
  } else if (opt_.predict_ttft) {
    attempts_.back().engine_predicted_ttft_s =
        replicas_[r]->PredictFirstToken(id, now, kTtftPredictionHorizonS);
    attempts_.back().admission_estimated_ttft_s = d.queue_delay_est_s + d.prefill_est_s;
  }
  recorder_.OnAdmitted(now, now, clamped || d.verdict == Verdict::kDegrade, ClassName(a));
  recorder_.ObserveWaiting(replicas_[r]->scheduler().num_waiting());
  ArmTimeouts(id, now);
  StartStep(r, now);
}

GatewayFront::TryReplica Sim::TryReplicaFor(std::uint32_t id, const EngineRequest& request,
                                            Seconds now, AdmissionDecision* d) {
  return [this, id, request, now, d](std::uint32_t to, std::int32_t clamp_max_tokens) {
    using Answer = GatewayFront::Answer;
    if (faults_.life(to) == ReplicaFaults::Life::kDead) {
      return Answer{Answer::Kind::kUnreachable, 0, {}, 0};
    }
    if (faults_.life(to) == ReplicaFaults::Life::kDraining) {
      return Answer{Answer::Kind::kRefused, 503, "draining", 1};
    }
    EngineRequest sent = request;
    if (clamp_max_tokens > 0) {
      sent.max_tokens = std::min(sent.max_tokens, clamp_max_tokens);
    }
    *d = replicas_[to]->Offer(id, sent, now);
    return d->admitted() ? Answer{Answer::Kind::kAccepted, 0, {}, 0}
                         : Answer{Answer::Kind::kRefused, HttpStatus(*d), ToString(d->reason),
                                  d->retry_after_s};
  };
}

void Sim::ArmTimeouts(std::uint32_t id, Seconds sent_s) {
  if (sc_.client.ttft_timeout_s != kNever) {
    Push(sent_s + sc_.client.ttft_timeout_s, EventType::kTtftTimeout, id);
  }
  if (sc_.client.total_timeout_s != kNever) {
    Push(sent_s + sc_.client.total_timeout_s, EventType::kTotalTimeout, id);
  }
  if (rc_.admission.request_deadline_s != kNever) {
    Push(sent_s + rc_.admission.request_deadline_s, EventType::kRequestDeadline, id);
  }
}

EngineRequest Sim::RequestOf(std::uint32_t logical) const {
  const Arrival& a = arrivals_[logical_[logical].arrival];
  // Trace records have no class: their flow is their tenant. Every attempt (a retry too)
  // carries its arrival's prompt segments, so the engine's prefix cache sees the same prompt.
  const std::string_view flow =
      a.class_index >= 0 ? sc_.classes[static_cast<std::size_t>(a.class_index)].flow() : "";
  return EngineRequest{a.tenant,   a.prompt_tokens,  a.max_tokens,
                       a.priority, a.ignore_eos,     a.ignore_eos ? 0 : a.output_tokens,
                       flow,       a.prompt_segments};
}

void Sim::DispatchWaiting(Seconds now) {
  if (!gateway_.has_value()) {
    return;
  }
  AdmissionDecision d;
  const auto try_for = [&](routing::Ticket t) {
    const auto id = static_cast<std::uint32_t>(t);
    return TryReplicaFor(id, RequestOf(attempts_[id].logical), now, &d);
  };
  while (gateway_->waiting() > 0) {
    const std::optional<GatewayFront::Dispatched> next = gateway_->DispatchNext(now, try_for);
    if (!next.has_value()) {
      return;
    }
    const auto id = static_cast<std::uint32_t>(next->ticket);
    Attempt& at = attempts_[id];
    if (next->outcome.queued) {  // its wait ran out, and the cascade's next pool queued it
      Push(next->outcome.expires_s, EventType::kWaitEnds, id);
      continue;
    }
    at.at_gateway = false;
    if (!next->outcome.forwarded) {
      RefusedFromQueue(id, *next, now);
      continue;
    }
    at.replica = next->outcome.replica;
    at.alone = next->outcome.alone;
    if (next->outcome.storable) {
      at.cache_key = CacheKey(arrivals_[logical_[at.logical].arrival]);
    }
    at.forwarded_s = now;
    at.predicted_ttft_s = next->outcome.predicted_ttft_s;
    at.degraded = next->outcome.clamped_max_tokens > 0 || d.verdict == Verdict::kDegrade;
    recorder_.OnAdmitted(now, at.sent_s,
                         next->outcome.clamped_max_tokens > 0 || d.verdict == Verdict::kDegrade,
                         ClassOf(at));
    recorder_.ObserveWaiting(replicas_[at.replica]->scheduler().num_waiting());
    StartStep(at.replica, now);
  }
}

void Sim::RefusedFromQueue(std::uint32_t id, const GatewayFront::Dispatched& d, Seconds now) {
  Attempt& at = attempts_[id];
  at.done = true;
  const GatewayFront::Outcome& o = d.outcome;
  const std::int32_t queue = o.by_gateway ? kAnyQueue : static_cast<std::int32_t>(o.replica);
  if (!d.expired) {
    OnRejected(at.logical, queue, now, o.status, o.reason, o.retry_after_s, at.sent_s);
    return;
  }
  RecordEnd(id, now, AttemptOutcome::kDroppedAtQueueHead, o.status, o.reason, o.retry_after_s);
  recorder_.OnAdmitted(now, at.sent_s, false, ClassOf(at));
  recorder_.OnDroppedAtQueueHead(now, at.sent_s, ClassOf(at));
  recorder_.OnRetryAfter(now, o.status, o.reason, o.retry_after_s, queue);
  MaybeRetry(at.logical, now, o.retry_after_s);
}

void Sim::OnRejected(std::uint32_t logical, std::int32_t queue, Seconds now, int status,
                     std::string_view reason, Seconds retry_after_s, Seconds sent_s) {
  RecordRefusal(logical, sent_s, now, status, reason, retry_after_s);
  recorder_.OnRejected(now, now, status, reason, ClassName(arrivals_[logical_[logical].arrival]));
  recorder_.OnRetryAfter(now, status, reason, retry_after_s, queue);
  if (status != 400) {  // a request that is too long stays too long
    MaybeRetry(logical, now, retry_after_s);
  }
}

void Sim::MaybeRetry(std::uint32_t logical, Seconds now, Seconds retry_after_s) {
  if (const std::optional<Seconds> delay =
          retry_.Next(logical_[logical].attempts, retry_after_s, rng_)) {
    Push(now + *delay, EventType::kRetry, logical);
  }
}

RunSummary Sim::Run() {
  std::size_t next_arrival = 0;
  Push(1.0, EventType::kTick, 0);
  ++periodic_;
  const auto answers_metrics = [this](Seconds t) {
    return [this, t](std::size_t r) { return faults_.AnswersMetrics(r, t); };
  };
  if (gateway_.has_value()) {
    gateway_->Scrape(replicas_, 0.0, answers_metrics(0.0));
    Push(gateway_->scrape_interval_s(), EventType::kScrape, 0);
    Push(gateway_->probe_interval_s(), EventType::kProbe, 0);
    periodic_ += 2;
  }
  // Faults are real events: a kill or drain after the last arrival still happens.
  for (std::uint32_t i = 0; i < faults_.faults().size(); ++i) {
    const FleetFault& f = faults_.faults()[i];
    if (f.kind == FleetFault::Kind::kKill || f.kind == FleetFault::Kind::kDrain) {
      Push(f.at_s, EventType::kFault, i);
    }
  }
  // Work remains while arrivals are due or the heap holds more than the periodic events.
  const auto work_remains = [&] {
    return next_arrival < arrivals_.size() || heap_.size() > static_cast<std::size_t>(periodic_);
  };
  while (next_arrival < arrivals_.size() || !heap_.empty()) {
    CheckLedger(/*at_end=*/false);
    const bool take_arrival = next_arrival < arrivals_.size() &&
                              (heap_.empty() || arrivals_[next_arrival].time_s <= heap_.top().t);
    if (take_arrival) {
      const Seconds t = arrivals_[next_arrival].time_s;
      logical_.push_back(Logical{static_cast<std::uint32_t>(next_arrival), 0});
      retry_.OnFirstAttempt();
      ++next_arrival;
      last_event_s_ = t;
      SendAttempt(static_cast<std::uint32_t>(logical_.size() - 1), t);
      DispatchWaiting(t);
      continue;
    }
    const Event e = heap_.top();
    heap_.pop();
    if (e.type == EventType::kRequestDeadline && attempts_[e.target].done) {
      continue;  // answered in time: the deadline passes unnoticed
    }
    if (e.type == EventType::kWaitEnds && !attempts_[e.target].at_gateway) {
      continue;  // it left the gateway's queue before its wait ran out
    }
    const bool periodic =
        e.type == EventType::kTick || e.type == EventType::kScrape || e.type == EventType::kProbe;
    if (periodic) {
      --periodic_;
    } else {
      last_event_s_ = std::max(last_event_s_, e.t);  // the run ends with its last real event
    }
    switch (e.type) {
      case EventType::kStepDone:
        OnStepDone(e.target, e.t);
        break;
      case EventType::kTtftTimeout:
        if (!attempts_[e.target].done && attempts_[e.target].first_token_s == kNever) {
          Abandon(e.target, e.t, "ttft_timeout");
        }
        break;
      case EventType::kTotalTimeout:
        if (!attempts_[e.target].done) {
          Abandon(e.target, e.t, "total_timeout");
        }
        break;
      case EventType::kRequestDeadline:
        TimeOut(e.target, e.t);
        break;
      case EventType::kRetry:
        SendAttempt(e.target, e.t);
        break;
      case EventType::kScrape:
        gateway_->Scrape(replicas_, e.t, answers_metrics(e.t));
        if (work_remains()) {
          Push(e.t + gateway_->scrape_interval_s(), EventType::kScrape, 0);
          ++periodic_;
        }
        break;
      case EventType::kProbe:
        gateway_->Probe(e.t, [this](std::size_t r) { return faults_.Probe(r); });
        if (work_remains()) {
          Push(e.t + gateway_->probe_interval_s(), EventType::kProbe, 0);
          ++periodic_;
        }
        break;
      case EventType::kFault:
        ApplyFault(faults_.faults()[e.target], e.t);
        break;
      case EventType::kWaitEnds:
        break;  // DispatchWaiting below expires it
      case EventType::kTick:
        Tick(static_cast<std::int64_t>(e.t) - 1);
        if (work_remains()) {
          Push(e.t + 1.0, EventType::kTick, 0);
          ++periodic_;
        }
        break;
    }
    DispatchWaiting(e.t);  // whatever changed may let a waiting request go
  }
  std::int64_t preemptions = 0;
  std::int64_t recomputed = 0;
  std::int64_t cache_queries = 0;
  std::int64_t cache_hits = 0;
  for (std::uint32_t r = 0; r < replicas_.size(); ++r) {
    const Engine* engine = replicas_[r].get();
    const EngineStats s = engine->stats();
    preemptions += s.num_preemptions_total;
    recomputed += s.num_recomputed_tokens_total;
    cache_queries += s.prefix_cache_queries_total;
    cache_hits += s.prefix_cache_hits_total;
    // A killed engine keeps what it held when it died; every other one has drained.
    if (!engine->idle() && faults_.life(r) != ReplicaFaults::Life::kDead) {
      throw SimInvariantError("engine not idle at the end of the run (seed " +
                              std::to_string(opt_.seed) + ")");
    }
  }
  Seconds not_completed_s = 0;
  for (const Attempt& a : attempts_) {
    if (!a.done) {
      throw SimInvariantError("an admitted request was lost (seed " + std::to_string(opt_.seed) +
                              ")");
    }
    not_completed_s += a.completed ? 0.0 : a.engine_s;
  }
  CheckLedger(/*at_end=*/true);
  recorder_.SetNotCompletedEngineTime(not_completed_s);
  recorder_.SetEngineTotals(preemptions, recomputed);
  recorder_.SetPrefixCacheTotals(cache_queries, cache_hits);
  RunSummary s = recorder_.Finish(sc_.ArrivalSpan(), last_event_s_);
  EvaluateObjectives(sc_.objectives, &s);
  s.source = "sim";
  s.scenario = sc_.name;
  s.policy = std::string(ToString(rc_.admission.policy));
  s.profile = rc_.profile.name;
  s.seed = opt_.seed;
  s.replicas = opt_.replicas;
  s.cancellation_propagation = rc_.propagate_cancellation;
  const ServiceEstimator& est = replicas_.front()->admission().estimator();
  s.est_service_rate_rps = est.service_rate_rps();
  s.est_prefill_tokens_per_s = est.prefill_tokens_per_s();
  s.est_step_time_s = est.step_time_s();
  return s;
}

}  // namespace sim_detail

RunSummary Simulate(const Scenario& scenario, const RunConfig& config, const SimOptions& options) {
  sim_detail::Sim sim(scenario, config, options);
  return sim.Run();
}

}  // namespace spillway
