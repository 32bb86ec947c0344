#include "engine/engine.h"

#include <algorithm>
#include <cmath>

#include "executor/emulated_executor.h"

namespace spillway {
namespace {

// What admission saw of a request, as admitted.
OutputQuery QueryOf(const Request& r) {
  return {r.spec.max_output_tokens, r.spec.prompt_tokens, r.spec.ignore_eos};
}

}  // namespace

Engine::Engine(EngineConfig config, Seconds now, std::unique_ptr<Executor> executor)
    : config_(std::move(config)),
      blocks_(config_.num_gpu_blocks, config_.profile.block_size),
      scheduler_(config_.scheduler, &blocks_),
      executor_(executor ? std::move(executor)
                         : std::make_unique<EmulatedExecutor>(config_.profile)),
      admission_(config_.admission, now),
      cost_model_(config_.profile) {}

AdmissionDecision Engine::CheckFits(const EngineRequest& request) const {
  AdmissionDecision d;
  d.max_output_tokens = request.max_tokens;
  const std::int64_t tokens = std::int64_t{request.prompt_tokens} + request.max_tokens;
  if (tokens > config_.max_model_len) {
    return AdmissionController::Refusal(OverloadReason::kContextLengthExceeded, 1, d);
  }
  const std::int64_t pool_tokens = std::int64_t{blocks_.num_total()} * blocks_.block_size();
  if (tokens > pool_tokens) {
    d.max_output_tokens =
        static_cast<std::int32_t>(std::max<std::int64_t>(0, pool_tokens - request.prompt_tokens));
    return AdmissionController::Refusal(OverloadReason::kKvCapacityExceeded, 1, d);
  }
  return d;
}

AdmissionDecision Engine::Offer(RequestId id, const EngineRequest& request, Seconds now) {
  if (const AdmissionDecision fits = CheckFits(request); !fits.admitted()) {
    return fits;
  }
  const AdmissionDecision d =
      admission_.Decide(AdmissionRequest{request.tenant, request.prompt_tokens, request.max_tokens,
                                         request.priority, request.ignore_eos},
                        scheduler_.StatsAhead(request.priority, now), now);
  if (!d.admitted()) {
    return d;
  }
  RequestSpec spec;
  spec.id = id;
  spec.prompt_tokens = request.prompt_tokens;
  spec.max_output_tokens = d.max_output_tokens;
  spec.priority = request.priority;
  spec.arrival_s = now;
  spec.deadline_s = d.deadline_s;
  spec.ignore_eos = request.ignore_eos;
  spec.emulated_output_tokens = request.ignore_eos ? 0 : request.emulated_output_tokens;
  scheduler_.Submit(spec);
  return d;
}

const StepPlan& Engine::BeginStep(Seconds now) {
  ForgetFinished();
  events_.clear();
  const StepPlan& plan = scheduler_.Step(now, &events_);
  for (const Request& r : events_.finished) {
    if (r.finish_reason == FinishReason::kStop) {  // a stop string the driver matched
      admission_.OnFinished(QueryOf(r), r.num_output_tokens);
    }
    if (deadline_aborts_.erase(r.spec.id) > 0 && r.num_output_tokens > 0) {
      // Still generating at the deadline: as long as its cap, for all admission can tell.
      admission_.OnFinished(QueryOf(r), r.spec.max_output_tokens);
    }
  }
  if (plan.empty()) {
    return plan;
  }
  const EngineStats stats = scheduler_.stats();
  saturated_ = stats.num_waiting > 0 || stats.num_running >= stats.max_num_seqs;
  result_ = executor_->Run(plan);
  begin_s_ = now;
  in_flight_ = true;
  // The step's time is attributed to sequences by their share of its tokens; the share of
  // those whose client has gone is wasted.
  std::int64_t wasted_tokens = 0;
  if (!gone_.empty()) {
    for (const ScheduledSeq& s : plan.seqs) {
      wasted_tokens += gone_.contains(s.id) ? s.num_new_tokens : 0;
    }
  }
  const Seconds d = result_.duration_s;
  account_ = StepAccount{d, d * static_cast<double>(wasted_tokens) / plan.num_tokens(),
                         plan.num_prefill_tokens, plan.num_decode_tokens,
                         static_cast<std::int32_t>(result_.token_ids.size())};
  return plan;
}

void Engine::EndStep(Seconds now) {
  in_flight_ = false;
  ForgetFinished();
  events_.clear();
  scheduler_.OnStepDone(result_, now, &events_);
  std::int32_t completions = 0;
  for (const Request& r : events_.finished) {
    if (r.finish_reason == FinishReason::kLength || r.finish_reason == FinishReason::kStop) {
      deadline_aborts_.erase(r.spec.id);  // finished in the step its deadline came
      ++completions;
      admission_.OnFinished(QueryOf(r), r.num_output_tokens);
    }
  }
  const Seconds planned_end_s = begin_s_ + account_.duration_s;
  const Seconds elapsed_s = now == planned_end_s ? account_.duration_s : now - begin_s_;
  const bool budget_full = account_.prefill_tokens + account_.decode_tokens >=
                           scheduler_.config().max_num_batched_tokens;
  admission_.OnStep(StepSample{now, elapsed_s, account_.prefill_tokens, account_.decode_tokens,
                               completions, saturated_, budget_full});
}

void Engine::ForgetFinished() {
  if (gone_.empty()) {
    return;
  }
  for (const Request& r : events_.finished) {
    gone_.erase(r.spec.id);
  }
}

void Engine::ClientGone(RequestId id) {
  if (scheduler_.Find(id) == nullptr) {
    return;
  }
  gone_.insert(id);
  if (config_.propagate_cancellation) {
    scheduler_.Abort(id);
  }
}

void Engine::Abort(RequestId id) {
  if (scheduler_.Find(id) == nullptr) {
    return;
  }
  gone_.insert(id);
  scheduler_.Abort(id);
}

Seconds Engine::PredictFirstToken(RequestId id, Seconds now, Seconds horizon_s) const {
  const Request* asked = scheduler_.Find(id);
  if (asked == nullptr || asked->state != RequestState::kWaiting || asked->num_output_tokens > 0) {
    return kNever;
  }
  BlockManager blocks = blocks_;
  Scheduler what_if(scheduler_, &blocks);
  const OutputLengths& lengths = admission_.output_lengths();
  what_if.SetExpectedOutputs([&](const Request& r) {
    return static_cast<std::int32_t>(std::ceil(lengths.Mean(QueryOf(r))));
  });
  StepEvents events;
  Seconds t = now;
  if (in_flight_) {  // the step in flight ends first
    t = std::max(now, begin_s_ + account_.duration_s);
    what_if.OnStepDone(result_, t, &events);
  }
  while (t - now <= horizon_s) {
    events.clear();
    const StepPlan& plan = what_if.Step(t, &events);
    if (plan.empty()) {
      return kNever;
    }
    StepResult result;  // the modelled step: its time, a placeholder token per sample
    result.duration_s = cost_model_.StepTime(plan);
    for (const ScheduledSeq& s : plan.seqs) {
      if (s.samples_token) {
        result.token_ids.push_back(0);
      }
    }
    t += result.duration_s;
    what_if.OnStepDone(result, t, &events);
    for (const TokenEvent& token : events.tokens) {
      if (token.id == id) {
        return t - now;
      }
    }
  }
  return kNever;
}

void Engine::AbortAtDeadline(RequestId id) {
  if (scheduler_.Find(id) == nullptr) {
    return;
  }
  deadline_aborts_.insert(id);
  Abort(id);
}

void Engine::FinishStop(RequestId id) {
  if (scheduler_.Find(id) == nullptr) {
    return;
  }
  gone_.insert(id);
  scheduler_.Finish(id, FinishReason::kStop);
}

Seconds Engine::DropRetryAfter() const {
  const Seconds w = QueueDelayEstimate();
  return std::isfinite(w) ? std::max(1.0, std::ceil(w)) : 1.0;
}

}  // namespace spillway
