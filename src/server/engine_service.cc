#include "server/engine_service.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <cmath>

namespace spillway::server {
namespace {

constexpr auto kUse = asio::as_tuple(asio::use_awaitable);
constexpr auto kIdleWake = std::chrono::seconds(1);

std::string_view DecisionName(const AdmissionDecision& d) {
  switch (d.verdict) {
    case Verdict::kAdmit:
      return "admit";
    case Verdict::kDegrade:
      return "degrade";
    case Verdict::kReject:
      return "reject";
  }
  return "unknown";
}

// vLLM's finished_reason values: stop, length, and abort for every other ending.
std::string_view SuccessLabel(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
    case FinishReason::kLength:
      return ToString(reason);
    default:
      return "abort";
  }
}

}  // namespace

std::string_view ToString(AbortCause cause) {
  switch (cause) {
    case AbortCause::kClientDisconnect:
      return "client_disconnect";
    case AbortCause::kServerTimeout:
      return "server_timeout";
    case AbortCause::kSlowClient:
      return "slow_client";
    case AbortCause::kShutdown:
      return "shutdown";
  }
  return "unknown";
}

EngineService::EngineService(asio::io_context& ioc, EngineOptions options, ServerMetrics& metrics,
                             const net::SteadyClock& clock)
    : options_(std::move(options)),
      metrics_(metrics),
      clock_(clock),
      strand_(asio::make_strand(ioc)),
      idle_timer_(strand_),
      step_timer_(strand_),
      blocks_(options_.num_gpu_blocks, options_.profile.block_size),
      scheduler_(options_.scheduler, &blocks_),
      executor_(options_.profile),
      admission_(options_.admission, clock.Now()) {}

void EngineService::Start() {
  heartbeat_s_ = clock_.Now();
  asio::co_spawn(strand_, Loop(), asio::detached);
}

void EngineService::Stop() {
  asio::post(strand_, [this] {
    stopping_ = true;
    idle_timer_.cancel();
  });
}

void EngineService::StartDraining() {
  asio::post(strand_, [this] {
    admission_.SetDraining(true);
    metrics_.draining->Set(1);
  });
}

asio::awaitable<SubmitResult> EngineService::Submit(const SubmitRequest& request,
                                                    const asio::any_io_executor& session) {
  // Hop onto the engine strand, decide, and hop back with the result.
  SubmitResult result = co_await asio::co_spawn(
      strand_,
      [this, &request, &session]() -> asio::awaitable<SubmitResult> {
        co_return DoSubmit(request, session);
      },
      asio::use_awaitable);
  co_return result;
}

SubmitResult EngineService::DoSubmit(const SubmitRequest& request,
                                     const asio::any_io_executor& session) {
  const Seconds now = clock_.Now();
  SubmitResult out;
  out.decision =
      admission_.Decide(AdmissionRequest{request.tenant, request.prompt_tokens, request.max_tokens},
                        scheduler_.StatsAhead(request.priority, now), now);
  metrics_.admission_decisions_total
      ->With({std::string(DecisionName(out.decision)), std::string(ToString(out.decision.reason)),
              request.tenant})
      .Inc();
  if (!out.decision.admitted()) {
    return out;
  }
  out.id = next_id_++;
  out.events = std::make_shared<EventChannel>(session, options_.channel_capacity);
  RequestSpec spec;
  spec.id = out.id;
  spec.prompt_tokens = request.prompt_tokens;
  spec.max_output_tokens = out.decision.max_output_tokens;
  spec.priority = request.priority;
  spec.arrival_s = now;
  spec.deadline_s = out.decision.deadline_s;
  scheduler_.Submit(spec);
  entries_.emplace(out.id, Entry{out.events, now});
  in_flight_ = static_cast<std::int64_t>(entries_.size());
  Wake();
  return out;
}

void EngineService::Abort(RequestId id, AbortCause cause) {
  asio::post(strand_, [this, id, cause] { DoAbort(id, cause); });
}

void EngineService::DoAbort(RequestId id, AbortCause cause) {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.client_gone) {
    return;  // finished already, or aborted before
  }
  it->second.client_gone = true;
  metrics_.aborts_total->With({std::string(ToString(cause))}).Inc();
  if (cause != AbortCause::kClientDisconnect || options_.propagate_cancellation) {
    scheduler_.Abort(id);
    Wake();
  }
}

void EngineService::AbortAll(AbortCause cause) {
  asio::post(strand_, [this, cause] {
    StreamEvent ev;
    ev.kind = StreamEvent::Kind::kShutdown;
    for (auto& [id, e] : entries_) {
      if (!e.client_gone) {
        e.events->try_send(boost::system::error_code{}, ev);
        DoAbort(id, cause);
      }
    }
  });
}

void EngineService::FinishStop(RequestId id) {
  asio::post(strand_, [this, id] {
    auto it = entries_.find(id);
    if (it != entries_.end() && !it->second.client_gone) {
      it->second.client_gone = true;  // the session has its answer; send nothing more
      scheduler_.Finish(id, FinishReason::kStop);
      Wake();
    }
  });
}

void EngineService::Wake() {
  if (idle_) {
    idle_timer_.cancel();
  }
}

Seconds EngineService::WastedShare(const StepPlan& plan, Seconds duration) const {
  std::int64_t wasted = 0;
  for (const ScheduledSeq& s : plan.seqs) {
    const auto it = entries_.find(s.id);
    if (it != entries_.end() && it->second.client_gone) {
      wasted += s.num_new_tokens;
    }
  }
  return duration * static_cast<double>(wasted) / plan.num_tokens();
}

asio::awaitable<void> EngineService::Loop() {
  while (!stopping_) {
    Seconds now = clock_.Now();
    heartbeat_s_ = now;
    events_.clear();
    const StepPlan& plan = scheduler_.Step(now, &events_);
    HandleFinished(now);
    Publish();
    if (plan.empty()) {
      idle_ = true;
      idle_timer_.expires_after(kIdleWake);
      co_await idle_timer_.async_wait(kUse);
      idle_ = false;
      continue;
    }
    const EngineStats before = scheduler_.stats();
    const StepResult result = executor_.Run(plan);
    const Seconds wasted = WastedShare(plan, result.duration_s);
    const std::int32_t prefill = plan.num_prefill_tokens;
    const std::int32_t decode = plan.num_decode_tokens;
    step_timer_.expires_at(clock_.At(now + result.duration_s));
    co_await step_timer_.async_wait(kUse);
    const Seconds end = clock_.Now();
    events_.clear();
    scheduler_.OnStepDone(result, end, &events_);
    const std::int32_t completions = static_cast<std::int32_t>(events_.finished.size());
    DeliverTokens(end);
    HandleFinished(end);
    admission_.OnStep(
        StepSample{end, end - now, prefill, decode, completions,
                   before.num_waiting > 0 || before.num_running >= before.max_num_seqs});
    metrics_.engine_busy_seconds_total->Inc(end - now);
    metrics_.wasted_engine_seconds_total->Inc(wasted);
    metrics_.prompt_tokens_total->Inc(prefill);
    metrics_.generation_tokens_total->Inc(static_cast<double>(result.token_ids.size()));
  }
}

void EngineService::DeliverTokens(Seconds now) {
  for (const TokenEvent& t : events_.tokens) {
    auto it = entries_.find(t.id);
    if (it == entries_.end() || it->second.client_gone) {
      continue;  // nobody to deliver to: this token is waste, accounted per step
    }
    Entry& e = it->second;
    if (e.tokens == 0) {
      metrics_.time_to_first_token_seconds->Observe(now - e.arrival_s);
    } else {
      metrics_.inter_token_latency_seconds->Observe(now - e.last_token_s);
    }
    e.last_token_s = now;
    ++e.tokens;
    StreamEvent ev;
    ev.kind = StreamEvent::Kind::kToken;
    ev.token_id = t.token_id;
    if (!e.events->try_send(boost::system::error_code{}, ev)) {
      // A closed channel means the session stopped listening (its client left and its
      // receive was cancelled); a full one, that the client reads too slowly.
      DoAbort(t.id, e.events->is_open() ? AbortCause::kSlowClient : AbortCause::kClientDisconnect);
      e.events->close();
    }
  }
}

void EngineService::HandleFinished(Seconds now) {
  for (const Request& r : events_.finished) {
    auto it = entries_.find(r.spec.id);
    if (it == entries_.end()) {
      continue;
    }
    Entry& e = it->second;
    metrics_.request_success_total
        ->With({metrics_.model, std::string(SuccessLabel(r.finish_reason))})
        .Inc();
    if (r.finish_reason == FinishReason::kDeadline) {
      metrics_.aborts_total->With({"deadline"}).Inc();
    }
    if (r.ever_scheduled()) {
      metrics_.request_queue_time_seconds->Observe(r.first_scheduled_s - r.spec.arrival_s);
    }
    if (r.first_token_s != kNever) {
      metrics_.request_prefill_time_seconds->Observe(r.first_token_s - r.first_scheduled_s);
    }
    if (r.finish_reason == FinishReason::kLength || r.finish_reason == FinishReason::kStop) {
      metrics_.e2e_request_latency_seconds->Observe(now - r.spec.arrival_s);
      if (r.num_output_tokens > 1) {
        metrics_.time_per_output_token_seconds->Observe((r.last_token_s - r.first_token_s) /
                                                        (r.num_output_tokens - 1));
      }
    }
    if (!e.client_gone) {
      StreamEvent ev;
      ev.kind = StreamEvent::Kind::kFinished;
      ev.reason = r.finish_reason;
      ev.completion_tokens = r.num_output_tokens;
      if (r.finish_reason == FinishReason::kDeadline) {
        const Seconds w = admission_.QueueDelayEstimate(scheduler_.stats());
        ev.retry_after_s = std::isfinite(w) ? std::max(1.0, std::ceil(w)) : 1.0;
      }
      e.events->try_send(boost::system::error_code{}, ev);
    }
    entries_.erase(it);
  }
  in_flight_ = static_cast<std::int64_t>(entries_.size());
}

void EngineService::Publish() {
  const EngineStats s = scheduler_.stats();
  metrics_.num_requests_waiting->Set(s.num_waiting);
  metrics_.num_requests_running->Set(s.num_running);
  metrics_.kv_cache_usage_perc->Set(s.kv_usage);
  const double preemptions = static_cast<double>(s.num_preemptions_total);
  metrics_.num_preemptions_total->Inc(preemptions - metrics_.num_preemptions_total->value());
  const double recomputed = static_cast<double>(s.num_recomputed_tokens_total);
  metrics_.recomputed_prefill_tokens_total->Inc(recomputed -
                                                metrics_.recomputed_prefill_tokens_total->value());
  const Seconds w = admission_.QueueDelayEstimate(s);
  metrics_.estimated_queue_delay_seconds->Set(std::isfinite(w) ? w : -1.0);
  metrics_.service_rate_requests_per_second->Set(admission_.estimator().service_rate_rps());
  metrics_.prefill_throughput_tokens_per_second->Set(admission_.estimator().prefill_tokens_per_s());
}

}  // namespace spillway::server
