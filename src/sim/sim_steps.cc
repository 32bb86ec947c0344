// The Sim's engine-side events (sim_run.h): steps begun and ended, finished requests,
// clients that leave, the server's deadline, fleet faults, the per-second gauges and the
// invariant checks.

#include <algorithm>
#include <cmath>

#include "engine/contract_status.h"
#include "sim/sim_run.h"

namespace spillway::sim_detail {

void Sim::StartStep(std::uint32_t r, Seconds now) {
  Engine& engine = *replicas_[r];
  if (engine.step_in_flight() || faults_.life(r) == ReplicaFaults::Life::kDead) {
    return;
  }
  const StepPlan& plan = engine.BeginStep(now);
  HandleFinished(r, now);
  Check(engine);
  if (plan.empty()) {
    MaybeExit(r);
    return;
  }
  // Each attempt's share of the step, by its share of the step's tokens.
  const StepAccount& step = engine.step();
  for (const ScheduledSeq& s : plan.seqs) {
    attempts_[s.id].engine_s += engine.ShareOf(s);
  }
  recorder_.OnEngineStep(step.duration_s, step.wasted_s, step.prefill_tokens);
  Push(now + step.duration_s * faults_.SlowFactor(r, now), EventType::kStepDone, r);
}

void Sim::OnStepDone(std::uint32_t r, Seconds now) {
  if (faults_.life(r) == ReplicaFaults::Life::kDead) {
    return;  // killed mid-step: the step never ends
  }
  Engine& engine = *replicas_[r];
  engine.EndStep(now);
  for (const TokenEvent& t : engine.events().tokens) {
    Attempt& a = attempts_[t.id];
    if (a.done) {
      continue;  // the client is gone: this token is waste, already accounted
    }
    if (a.first_token_s == kNever) {
      a.first_token_s = now;
      if (a.engine_predicted_ttft_s != kNever && std::isfinite(a.admission_estimated_ttft_s)) {
        recorder_.OnTtftPrediction(a.engine_predicted_ttft_s, a.admission_estimated_ttft_s,
                                   now - a.forwarded_s);
      }
      if (gateway_.has_value()) {
        gateway_->OnFirstToken(r, arrivals_[logical_[a.logical].arrival].prompt_tokens,
                               now - a.forwarded_s, a.alone, a.predicted_ttft_s);
      }
    } else {
      recorder_.OnInterTokenGap(now - a.last_token_s);
    }
    a.last_token_s = now;
    ++a.tokens;
  }
  HandleFinished(r, now);
  Check(engine);
  StartStep(r, now);
  MaybeExit(r);
}

void Sim::MaybeExit(std::uint32_t r) {
  if (faults_.life(r) == ReplicaFaults::Life::kDraining && replicas_[r]->idle() &&
      !replicas_[r]->step_in_flight()) {
    faults_.set_life(r, ReplicaFaults::Life::kDead);  // drained: the process exits
  }
}

void Sim::ApplyFault(const FleetFault& fault, Seconds now) {
  const auto r = static_cast<std::uint32_t>(fault.endpoint);
  if (faults_.life(r) == ReplicaFaults::Life::kDead) {
    return;
  }
  if (fault.kind == FleetFault::Kind::kKill) {
    Kill(r, now);
  } else if (fault.kind == FleetFault::Kind::kDrain) {
    faults_.set_life(r, ReplicaFaults::Life::kDraining);
    MaybeExit(r);
  }
}

void Sim::Kill(std::uint32_t r, Seconds now) {
  faults_.set_life(r, ReplicaFaults::Life::kDead);
  for (std::uint32_t id = 0; id < attempts_.size(); ++id) {
    Attempt& a = attempts_[id];
    if (a.replica != r || a.done || a.at_gateway) {
      continue;
    }
    a.done = true;
    EndAtGateway(id, now, GatewayFront::Ending::kFailed);
    recorder_.OnRequestDone(
        {RequestOutcome::Kind::kFailed, a.sent_s, a.first_token_s, now, a.tokens}, ClassOf(a));
    // Its connection breaks: the client sees the stream end without [DONE].
    RecordEnd(id, now, AttemptOutcome::kFailed, 200, "stream_broken");
  }
}

void Sim::HandleFinished(std::uint32_t r, Seconds now) {
  for (const Request& req : replicas_[r]->events().finished) {
    Attempt& a = attempts_[req.spec.id];
    // Its stay in the waiting queue: until its first prefill, or its drop or abort.
    recorder_.OnQueueSpan(req.spec.arrival_s,
                          req.ever_scheduled() ? req.first_scheduled_s : req.finished_s,
                          static_cast<std::int32_t>(r));
    if (req.first_token_s != kNever) {
      recorder_.OnEngineTiming(req.first_scheduled_s - req.spec.arrival_s,
                               req.first_token_s - req.first_scheduled_s);
    }
    switch (req.finish_reason) {
      case FinishReason::kLength:
      case FinishReason::kStop:
        if (!a.done) {
          a.done = true;
          a.completed = true;
          EndAtGateway(req.spec.id, now, GatewayFront::Ending::kCompleted);
          if (!a.cache_key.empty()) {
            gateway_->StoreAnswer(a.cache_key, now);
          }
          recorder_.OnRequestDone({RequestOutcome::Kind::kCompleted, a.sent_s, a.first_token_s, now,
                                   a.tokens, ServedModel(a)},
                                  ClassOf(a));
          RecordEnd(req.spec.id, now, AttemptOutcome::kCompleted, 200, "");
        }
        break;
      case FinishReason::kDeadline: {
        if (!a.done) {
          a.done = true;
          EndAtGateway(req.spec.id, now, GatewayFront::Ending::kFailed);
          const Seconds retry_after_s = replicas_[r]->DropRetryAfter(now);
          recorder_.OnDroppedAtQueueHead(now, a.sent_s, ClassOf(a));
          recorder_.OnRetryAfter(now, 429, "queue_deadline_exceeded", retry_after_s,
                                 static_cast<std::int32_t>(r));
          RecordEnd(req.spec.id, now, AttemptOutcome::kDroppedAtQueueHead, 200,
                    "queue_deadline_exceeded", retry_after_s);
          MaybeRetry(a.logical, now, retry_after_s);
        }
        break;
      }
      case FinishReason::kPreemptionLimit:
      case FinishReason::kRejected:
        if (!a.done) {
          a.done = true;
          EndAtGateway(req.spec.id, now, GatewayFront::Ending::kFailed);
          recorder_.OnRequestDone(
              {RequestOutcome::Kind::kFailed, a.sent_s, a.first_token_s, now, a.tokens},
              ClassOf(a));
          RecordEnd(req.spec.id, now, AttemptOutcome::kFailed, 200, ToString(req.finish_reason));
        }
        break;
      default:
        break;  // aborts: the client already left and was recorded then
    }
  }
}

void Sim::Abandon(std::uint32_t id, Seconds now, std::string_view why) {
  Attempt& a = attempts_[id];
  a.done = true;
  a.gone_s = now;
  if (a.at_gateway) {  // gone while waiting in the gateway's queue: no replica had it
    EndWhileWaiting(id, now, RequestOutcome::Kind::kAbandoned, why);
    if (sc_.client.retry_on_timeout) {
      MaybeRetry(a.logical, now, 0);
    }
    return;
  }
  EndAtGateway(id, now, GatewayFront::Ending::kCancelled);
  recorder_.OnRequestDone(
      {RequestOutcome::Kind::kAbandoned, a.sent_s, a.first_token_s, now, a.tokens}, ClassOf(a));
  RecordEnd(id, now, AttemptOutcome::kAbandoned, 200, why);
  replicas_[a.replica]->ClientGone(id);
  if (rc_.propagate_cancellation) {
    StartStep(a.replica, now);
  }
  if (sc_.client.retry_on_timeout) {
    MaybeRetry(a.logical, now, 0);
  }
}

void Sim::TimeOut(std::uint32_t id, Seconds now) {
  Attempt& a = attempts_[id];
  a.done = true;
  a.gone_s = now;
  if (a.at_gateway) {
    EndWhileWaiting(id, now, RequestOutcome::Kind::kFailed, "request_timeout");
    return;
  }
  EndAtGateway(id, now, GatewayFront::Ending::kFailed);
  recorder_.OnRequestDone({RequestOutcome::Kind::kFailed, a.sent_s, a.first_token_s, now, a.tokens},
                          ClassOf(a));
  RecordEnd(id, now, AttemptOutcome::kFailed, 200, "request_timeout");
  // The server aborts on its deadline, propagation or not.
  replicas_[a.replica]->AbortAtDeadline(id);
  StartStep(a.replica, now);
}

void Sim::EndWhileWaiting(std::uint32_t id, Seconds now, RequestOutcome::Kind kind,
                          std::string_view why) {
  Attempt& a = attempts_[id];
  a.at_gateway = false;
  gateway_->EndWaiting(id, kind == RequestOutcome::Kind::kAbandoned
                               ? GatewayFront::Ending::kCancelled
                               : GatewayFront::Ending::kFailed);
  // The gateway had taken it (as the load generator counts a request without an answer yet).
  recorder_.OnAdmitted(now, a.sent_s, false, ClassOf(a));
  recorder_.OnRequestDone({kind, a.sent_s, kNever, now, 0}, ClassOf(a));
  // No reply head yet: the client gave up waiting (status 0), or the gateway's deadline 504.
  RecordEnd(id, now,
            kind == RequestOutcome::Kind::kAbandoned ? AttemptOutcome::kAbandoned
                                                     : AttemptOutcome::kFailed,
            kind == RequestOutcome::Kind::kAbandoned ? 0 : 504, why);
}

void Sim::CheckLedger(bool at_end) const {
  if (!gateway_.has_value()) {
    return;
  }
  if (const std::string error = gateway_->LedgerError(at_end); !error.empty()) {
    throw SimInvariantError(error + " (seed " + std::to_string(opt_.seed) + ")");
  }
}

void Sim::Tick(std::int64_t second) {
  std::int32_t waiting = 0;
  std::int32_t running = 0;
  double kv = 0;
  for (std::uint32_t r = 0; r < replicas_.size(); ++r) {
    if (faults_.life(r) == ReplicaFaults::Life::kDead) {
      continue;  // gone: its last state is no load
    }
    const Engine& engine = *replicas_[r];
    waiting += engine.scheduler().num_waiting();
    running += engine.scheduler().num_running();
    kv += engine.blocks().usage();
  }
  recorder_.OnGauges(second, waiting, running, kv / static_cast<double>(replicas_.size()));
}

void Sim::Check(const Engine& engine) {
  if (const std::string error = checker_.AfterStep(engine); !error.empty()) {
    throw SimInvariantError("engine invariant broken (seed " + std::to_string(opt_.seed) +
                            ", scenario " + sc_.name + "): " + error);
  }
}

}  // namespace spillway::sim_detail
