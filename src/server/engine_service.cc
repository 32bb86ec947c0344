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

// The decision label of spillway_admission_decisions_total: admit, degrade or reject.
std::string_view DecisionName(const AdmissionDecision& d) {
  return d.admitted() ? ToString(d.verdict) : "reject";
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

EngineService::EngineService(asio::io_context& ioc, EngineConfig config, ServerMetrics& metrics,
                             const net::SteadyClock& clock, std::size_t channel_capacity)
    : metrics_(metrics),
      clock_(clock),
      strand_(asio::make_strand(ioc)),
      idle_timer_(strand_),
      step_timer_(strand_),
      engine_(std::move(config), clock.Now()),
      channel_capacity_(channel_capacity) {
  const EngineConfig& c = engine_.config();
  metrics_.cache_config_info
      ->With({std::to_string(c.profile.block_size), c.enable_prefix_caching ? "True" : "False",
              std::to_string(c.num_gpu_blocks)})
      .Set(1);
}

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
    engine_.SetDraining(true);
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
  out.decision = engine_.Offer(
      next_id_,
      EngineRequest{request.tenant, request.prompt_tokens, request.max_tokens, request.priority,
                    request.ignore_eos, request.emulated_output_tokens, request.fairness_id,
                    request.prompt_segments},
      now);
  metrics_.admission_decisions_total
      ->With({std::string(DecisionName(out.decision)), std::string(ToString(out.decision.reason)),
              request.tenant})
      .Inc();
  if (!out.decision.admitted()) {
    return out;
  }
  out.id = next_id_++;
  out.events = std::make_shared<EventChannel>(session, channel_capacity_);
  entries_.emplace(out.id, Entry{out.events, now});
  in_flight_ = static_cast<std::int64_t>(entries_.size());
  Wake();
  return out;
}

void EngineService::Abort(RequestId id, AbortCause cause) {
  asio::post(strand_, [this, id, cause] { DoAbort(id, cause); });
}

void EngineService::DoAbort(RequestId id, AbortCause cause) {
  if (!entries_.contains(id) || engine_.gone(id)) {
    return;  // finished already, or aborted before
  }
  metrics_.aborts_total->With({std::string(ToString(cause))}).Inc();
  if (cause == AbortCause::kClientDisconnect) {
    engine_.ClientGone(id);  // aborted only while cancellation propagation is on
  } else if (cause == AbortCause::kServerTimeout) {
    engine_.AbortAtDeadline(id);
  } else {
    engine_.Abort(id);
  }
  Wake();
}

void EngineService::AbortAll(AbortCause cause) {
  asio::post(strand_, [this, cause] {
    StreamEvent ev;
    ev.kind = StreamEvent::Kind::kShutdown;
    for (auto& [id, e] : entries_) {
      if (!engine_.gone(id)) {
        e.events->try_send(boost::system::error_code{}, ev);
        DoAbort(id, cause);
      }
    }
  });
}

void EngineService::FinishStop(RequestId id) {
  asio::post(strand_, [this, id] {
    if (auto it = entries_.find(id); it != entries_.end() && !engine_.gone(id)) {
      it->second.answered = true;
      engine_.FinishStop(id);  // the session has its answer; nothing more is sent
      Wake();
    }
  });
}

void EngineService::Wake() {
  if (idle_) {
    idle_timer_.cancel();
  }
}

asio::awaitable<void> EngineService::Loop() {
  while (!stopping_) {
    const Seconds now = clock_.Now();
    heartbeat_s_ = now;
    const StepPlan& plan = engine_.BeginStep(now);
    HandleFinished(now);
    Publish();
    if (plan.empty()) {
      idle_ = true;
      idle_timer_.expires_after(kIdleWake);
      co_await idle_timer_.async_wait(kUse);
      idle_ = false;
      continue;
    }
    const StepAccount step = engine_.step();
    for (const ScheduledSeq& seq : plan.seqs) {
      if (auto it = entries_.find(seq.id); it != entries_.end()) {
        it->second.engine_s += engine_.ShareOf(seq);
      }
    }
    step_timer_.expires_at(clock_.At(now + step.duration_s));
    co_await step_timer_.async_wait(kUse);
    const Seconds end = clock_.Now();
    engine_.EndStep(end);
    // The step's counters before its tokens go out: a scrape made after a client got its last
    // token already counts the step that produced it.
    metrics_.engine_busy_seconds_total->Inc(end - now);
    metrics_.wasted_engine_seconds_total->Inc(step.wasted_s);
    metrics_.prompt_tokens_total->Inc(step.prefill_tokens);
    metrics_.generation_tokens_total->Inc(step.sampled_tokens);
    DeliverTokens(end);
    HandleFinished(end);
  }
}

void EngineService::DeliverTokens(Seconds now) {
  for (const TokenEvent& t : engine_.events().tokens) {
    auto it = entries_.find(t.id);
    if (it == entries_.end() || engine_.gone(t.id)) {
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
  for (const Request& r : engine_.events().finished) {
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
    const bool completed =
        r.finish_reason == FinishReason::kLength || r.finish_reason == FinishReason::kStop;
    if (!e.answered && (!completed || engine_.gone(r.spec.id))) {
      metrics_.not_completed_engine_seconds_total->Inc(e.engine_s);
    }
    if (completed) {
      metrics_.e2e_request_latency_seconds->Observe(now - r.spec.arrival_s);
      const Seconds tpot = r.num_output_tokens > 1
                               ? (r.last_token_s - r.first_token_s) / (r.num_output_tokens - 1)
                               : 0;
      if (r.num_output_tokens > 1) {
        metrics_.time_per_output_token_seconds->Observe(tpot);
      }
      const EngineConfig& c = engine_.config();
      if (!engine_.gone(r.spec.id) &&
          r.first_token_s - r.spec.arrival_s <= c.admission.ttft_slo_s && tpot <= c.tpot_slo_s) {
        metrics_.goodput_requests_total->Inc();
      }
    }
    if (!engine_.gone(r.spec.id)) {
      StreamEvent ev;
      ev.kind = StreamEvent::Kind::kFinished;
      ev.reason = r.finish_reason;
      ev.completion_tokens = r.num_output_tokens;
      if (r.finish_reason == FinishReason::kDeadline) {
        ev.retry_after_s = engine_.DropRetryAfter(now);
      }
      e.events->try_send(boost::system::error_code{}, ev);
    }
    entries_.erase(it);
  }
  in_flight_ = static_cast<std::int64_t>(entries_.size());
}

void EngineService::Publish() {
  const EngineStats s = engine_.stats();
  metrics_.num_requests_waiting->Set(s.num_waiting);
  metrics_.num_requests_running->Set(s.num_running);
  metrics_.kv_cache_usage_perc->Set(s.kv_usage);
  metrics_.gpu_cache_usage_perc->Set(s.kv_usage);
  const double preemptions = static_cast<double>(s.num_preemptions_total);
  metrics_.num_preemptions_total->Inc(preemptions - metrics_.num_preemptions_total->value());
  const double recomputed = static_cast<double>(s.num_recomputed_tokens_total);
  metrics_.recomputed_prefill_tokens_total->Inc(recomputed -
                                                metrics_.recomputed_prefill_tokens_total->value());
  metrics_.prefix_cache_queries_total->Inc(static_cast<double>(s.prefix_cache_queries_total) -
                                           metrics_.prefix_cache_queries_total->value());
  metrics_.prefix_cache_hits_total->Inc(static_cast<double>(s.prefix_cache_hits_total) -
                                        metrics_.prefix_cache_hits_total->value());
  const Seconds w = engine_.QueueDelayEstimate();
  metrics_.estimated_queue_delay_seconds->Set(std::isfinite(w) ? w : -1.0);
  if (const Seconds now = clock_.Now(); now - queue_forecast_s_ >= kQueueForecastEvery) {
    queue_forecast_s_ = now;
    metrics_.ttft_forecast_queue_seconds->Set(engine_.QueueForecast(now));
  }
  const ServiceEstimator& est = engine_.admission().estimator();
  metrics_.service_rate_requests_per_second->Set(est.service_rate_rps());
  metrics_.prefill_throughput_tokens_per_second->Set(est.prefill_tokens_per_s());
}

}  // namespace spillway::server
