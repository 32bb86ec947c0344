#include "engine/engine.h"

#include <algorithm>
#include <cmath>

#include "core/rng.h"
#include "executor/emulated_executor.h"
#include "sched/block_hashes.h"

namespace spillway {
namespace {

// The id of the request being admitted in a forecast's what-if copy (never a live id: drivers
// number requests from 0 upwards).
constexpr RequestId kProbeId = ~RequestId{0} - 1;
// A forecast's expected arrivals of more urgent classes take the ids below it; at most this
// many per class.
constexpr std::int64_t kMaxOvertakers = 4096;
// A forecast plans for this many standard deviations over the mean count of a more urgent
// class's arrivals (rate x time, a Poisson count: sqrt of the mean), about its 99th
// percentile, not for the mean: with the mean, 2.1% to 3.5% of the admitted requests of
// scenarios/failure/priority-skew.yaml were dropped at the queue head (seeds 1 to 4), with
// this 0.3% to 0.8% (seeds 1 to 5), at the same goodput (spillway sim --policy forecast
// --records).
constexpr double kOvertakerCountZ = 2.33;

// What admission saw of a request, as admitted.
OutputQuery QueryOf(const Request& r) {
  return {r.spec.max_output_tokens, r.spec.prompt_tokens, r.spec.ignore_eos};
}

}  // namespace

Engine::Engine(EngineConfig config, Seconds now, std::unique_ptr<Executor> executor)
    : config_(std::move(config)),
      blocks_(config_.num_gpu_blocks, config_.profile.block_size, config_.enable_prefix_caching),
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
  const TtftForecastFn forecast = [&](Seconds horizon_s) {
    return MemoForecast(request, now, horizon_s);
  };
  EngineStats ahead = scheduler_.StatsAhead(request.priority, now);
  ahead.step_pace = pace_;
  // Admission sees the prefill it will cost: the prompt without what the prefix cache holds.
  const auto uncached =
      static_cast<std::int32_t>(request.prompt_tokens - CachedPromptTokens(id, request));
  const AdmissionDecision d = admission_.Decide(
      AdmissionRequest{request.tenant, request.prompt_tokens, request.max_tokens, request.priority,
                       request.ignore_eos, request.fairness_id, uncached},
      ahead, now, forecast);
  if (!d.admitted()) {
    return d;
  }
  forecast_memo_.clear();  // the queue changes
  if (admission_.fair_share().enabled()) {
    flows_[id] = std::string(request.fairness_id.empty() ? request.tenant : request.fairness_id);
  }
  if (d.ttft_forecast_s >= 0 && std::isfinite(d.ttft_forecast_s)) {
    forecasts_[id] = Forecast{now, d.ttft_forecast_s, request.priority, uncached};
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
  spec.prompt_segments = request.prompt_segments;
  scheduler_.Submit(spec);
  return d;
}

std::int64_t Engine::CachedPromptTokens(RequestId id, const EngineRequest& request) const {
  if (!blocks_.prefix_caching() || request.prompt_segments == nullptr) {
    return 0;  // nothing of it was seen before: its own tokens are new
  }
  RequestSpec spec;
  spec.id = id;  // its own tokens are named by its id: never found
  spec.prompt_tokens = request.prompt_tokens;
  spec.prompt_segments = request.prompt_segments;
  std::vector<std::uint64_t> hashes;
  return std::int64_t{CachedPrefixBlocks(blocks_, spec, request.prompt_tokens, &hashes)} *
         blocks_.block_size();
}

Seconds Engine::MemoForecast(const EngineRequest& request, Seconds now, Seconds horizon_s) {
  if (now != forecast_memo_now_ || forecast_memo_.size() >= kMaxForecastMemo) {
    forecast_memo_.clear();
    forecast_memo_now_ = now;
  }
  for (const ForecastMemo& m : forecast_memo_) {
    if (m.prompt_tokens == request.prompt_tokens && m.max_tokens == request.max_tokens &&
        m.priority == request.priority && m.prompt_segments == request.prompt_segments &&
        m.horizon_s == horizon_s) {
      return m.forecast_s;
    }
  }
  const Seconds f = ForecastFirstToken(request, now, horizon_s);
  forecast_memo_.push_back({request.prompt_tokens, request.max_tokens, request.priority,
                            request.prompt_segments, horizon_s, f});
  return f;
}

const StepPlan& Engine::BeginStep(Seconds now) {
  forecast_memo_.clear();
  ForgetFinished();
  events_.clear();
  const StepPlan& plan = scheduler_.Step(now, &events_);
  ObserveForecasts(now);
  for (const Request& r : events_.finished) {
    if (r.finish_reason == FinishReason::kStop) {  // a stop string the driver matched
      admission_.OnFinished(QueryOf(r), r.num_output_tokens);
    }
    const bool at_deadline = deadline_aborts_.erase(r.spec.id) > 0;
    if (at_deadline && r.num_output_tokens > 0) {
      // Still generating at the deadline: as long as its cap, for all admission can tell.
      admission_.OnFinished(QueryOf(r), r.spec.max_output_tokens);
    }
    if (const auto flow = flows_.find(r.spec.id); flow != flows_.end()) {
      if (at_deadline) {
        admission_.OnFlowFailed(flow->second, now);
      }
      flows_.erase(flow);
    }
  }
  if (plan.empty()) {
    return plan;
  }
  const EngineStats stats = scheduler_.stats();
  MeasurePace(now);
  saturated_ = stats.num_waiting > 0 || stats.num_running >= stats.max_num_seqs;
  result_ = executor_->Run(plan);
  begin_s_ = now;
  began_ = true;
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
  forecast_memo_.clear();
  in_flight_ = false;
  ForgetFinished();
  events_.clear();
  scheduler_.OnStepDone(result_, now, &events_);
  ObserveForecasts(now);
  std::int32_t completions = 0;
  for (const Request& r : events_.finished) {
    if (r.finish_reason == FinishReason::kLength || r.finish_reason == FinishReason::kStop) {
      deadline_aborts_.erase(r.spec.id);  // finished in the step its deadline came
      flows_.erase(r.spec.id);
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

void Engine::MeasurePace(Seconds now) {
  if (!began_ || !saturated_ || account_.duration_s <= 0) {
    return;  // the last step was followed by idle time, or there was none
  }
  // A saturated engine starts its next step as soon as the last ends: the cycle is the last
  // step's real time, with the driver's own work between steps. In virtual time it is the
  // modelled time (no update: the simulator's forecasts stay exact).
  const double ratio = (now - begin_s_) / account_.duration_s;
  if (std::abs(ratio - 1) > 1e-9) {
    pace_ += kPaceWeight * (std::clamp(ratio, 0.5, 10.0) - pace_);
  }
}

void Engine::ObserveForecasts(Seconds now) {
  if (forecasts_.empty()) {
    return;
  }
  for (const TokenEvent& token : events_.tokens) {
    if (token.index != 0) {
      continue;
    }
    if (auto it = forecasts_.find(token.id); it != forecasts_.end()) {
      admission_.OnForecastObserved(it->second.priority, it->second.ttft_s,
                                    now - it->second.arrival_s, it->second.prompt_tokens);
      forecasts_.erase(it);
    }
  }
  for (const Request& r : events_.finished) {
    if (auto it = forecasts_.find(r.spec.id); it != forecasts_.end()) {
      if (r.finish_reason == FinishReason::kDeadline) {  // waited at least this long
        admission_.OnForecastObserved(it->second.priority, it->second.ttft_s,
                                      now - it->second.arrival_s, it->second.prompt_tokens);
      }
      forecasts_.erase(it);
    }
  }
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
  forecast_memo_.clear();
  gone_.insert(id);
  if (config_.propagate_cancellation) {
    scheduler_.Abort(id);
  }
}

void Engine::Abort(RequestId id) {
  if (scheduler_.Find(id) == nullptr) {
    return;
  }
  forecast_memo_.clear();
  gone_.insert(id);
  scheduler_.Abort(id);
}

bool Engine::DrawOutputs(Scheduler* what_if, std::uint64_t future) const {
  const OutputLengths& lengths = admission_.output_lengths();
  bool drawn = false;
  what_if->SetExpectedOutputs([&](const Request& r) {
    const OutputQuery query = QueryOf(r);
    if (!lengths.Known(query) || query.ignore_eos) {
      return query.max_tokens;  // known, or nothing learned to draw from
    }
    drawn = true;
    // A deterministic draw per (request, tokens so far, future): the same state forecasts the
    // same in the simulator and live.
    Rng rng((r.spec.id + 1) * 0x9E3779B97F4A7C15ULL ^
            (static_cast<std::uint64_t>(r.num_output_tokens) << 20) ^
            (future * 0xBF58476D1CE4E5B9ULL));
    return lengths.SampleBeyond(query, r.num_output_tokens, rng.Uniform());
  });
  return drawn;
}

Seconds Engine::MeanOverFutures(const RequestSpec* probe, RequestId id, Seconds now,
                                Seconds horizon_s,
                                const std::vector<ClassRateEstimate>& overtakers) const {
  Seconds sum = 0;
  int futures = 0;
  for (std::uint64_t future = 0; future < kForecastFutures; ++future) {
    BlockManager blocks(blocks_, BlockManager::Counting{});
    Scheduler what_if(scheduler_, &blocks);
    const bool drawn = DrawOutputs(&what_if, future);
    if (probe != nullptr) {
      what_if.Submit(*probe);
    }
    const Seconds f = StepToFirstToken(&what_if, id, now, horizon_s, overtakers);
    if (!std::isfinite(f)) {
      return kNever;  // one future past the horizon: not within it, for all it can tell
    }
    sum += f;
    ++futures;
    if (!drawn) {
      break;  // every length known: every future is this one
    }
  }
  return sum / futures;
}

Seconds Engine::PredictFirstToken(RequestId id, Seconds now, Seconds horizon_s) const {
  const Request* asked = scheduler_.Find(id);
  if (asked == nullptr || asked->state != RequestState::kWaiting || asked->num_output_tokens > 0) {
    return kNever;
  }
  return MeanOverFutures(nullptr, id, now, horizon_s, {});
}

Seconds Engine::ForecastFirstToken(const EngineRequest& request, Seconds now,
                                   Seconds horizon_s) const {
  RequestSpec probe;
  probe.id = kProbeId;
  probe.prompt_tokens = request.prompt_tokens;
  probe.max_output_tokens = std::max(1, request.max_tokens);
  probe.priority = request.priority;
  probe.arrival_s = now;
  probe.ignore_eos = true;  // its own length does not delay its first token
  probe.prompt_segments = request.prompt_segments;
  return MeanOverFutures(&probe, kProbeId, now, horizon_s,
                         admission_.UrgentClassRates(request.priority, now));
}

Seconds Engine::QueueForecast(Seconds now) const {
  const double mean_prompt = admission_.mean_prompt_tokens();
  if (config_.admission.policy != AdmissionPolicy::kForecast || mean_prompt <= 0) {
    return -1;
  }
  EngineRequest typical;
  typical.prompt_tokens = TypicalPromptTokens();
  typical.max_tokens =
      std::max(1, static_cast<std::int32_t>(std::ceil(admission_.mean_output_tokens())));
  typical.ignore_eos = true;
  const Seconds horizon_s = 2 * config_.admission.ttft_slo_s;
  const Seconds ttft_s = ForecastFirstToken(typical, now, horizon_s);
  if (!std::isfinite(ttft_s)) {
    return horizon_s;
  }
  return std::max(0.0, ttft_s - admission_.PrefillEstimate(typical.prompt_tokens));
}

std::int32_t Engine::TypicalPromptTokens() const {
  return std::max(1, static_cast<std::int32_t>(std::lround(admission_.mean_prompt_tokens())));
}

Seconds Engine::StepToFirstToken(Scheduler* what_if, RequestId id, Seconds now, Seconds horizon_s,
                                 const std::vector<ClassRateEstimate>& overtakers) const {
  StepEvents events;
  Seconds t = now;
  if (in_flight_) {  // the step in flight ends first
    t = std::max(now, begin_s_ + account_.duration_s * pace_);
    what_if->OnStepDone(result_, t, &events);
  }
  std::vector<std::int64_t> arrived(overtakers.size(), 0);
  RequestId next_id = kProbeId;
  RequestSpec expected;  // an overtaker: the mean admitted request
  expected.prompt_tokens = std::max(1, static_cast<std::int32_t>(admission_.mean_prompt_tokens()));
  expected.max_output_tokens =
      std::max(1, static_cast<std::int32_t>(std::ceil(admission_.mean_output_tokens())));
  expected.ignore_eos = true;
  // The server's request deadline aborts what is still live then (AbortAtDeadline).
  std::vector<std::pair<Seconds, RequestId>> deadlines;
  if (const Seconds limit_s = config_.admission.request_deadline_s;
      std::isfinite(limit_s) && limit_s > 0) {
    scheduler_.ForEachLive([&](const Request& r) {
      if (r.spec.arrival_s + limit_s <= now + horizon_s) {
        deadlines.emplace_back(r.spec.arrival_s + limit_s, r.spec.id);
      }
    });
    std::sort(deadlines.begin(), deadlines.end(), std::greater<>());
  }
  StepResult result;  // the modelled step: its time, a placeholder token per sample
  while (t - now <= horizon_s) {
    while (!deadlines.empty() && deadlines.back().first <= t) {
      what_if->Abort(deadlines.back().second);
      deadlines.pop_back();
    }
    for (std::size_t c = 0; c < overtakers.size(); ++c) {
      const double mean_due = overtakers[c].rate_rps * (t - now);
      const auto due =
          static_cast<std::int64_t>(std::ceil(mean_due + kOvertakerCountZ * std::sqrt(mean_due)));
      for (; arrived[c] < std::min(due, kMaxOvertakers); ++arrived[c]) {
        expected.id = --next_id;
        expected.priority = overtakers[c].priority;
        expected.arrival_s = t;
        what_if->Submit(expected);
      }
    }
    events.clear();
    const StepPlan& plan = what_if->Step(t, &events);
    if (plan.empty()) {
      return kNever;
    }
    result.duration_s = cost_model_.StepTime(plan) * pace_;
    result.token_ids.clear();
    bool first_token = false;
    for (const ScheduledSeq& s : plan.seqs) {
      if (s.samples_token) {
        result.token_ids.push_back(0);
        first_token = first_token || s.id == id;
      }
    }
    t += result.duration_s;
    if (first_token) {
      return t - now;  // the step that samples its first token ends then
    }
    what_if->OnStepDone(result, t, &events);
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
  forecast_memo_.clear();
  gone_.insert(id);
  scheduler_.Finish(id, FinishReason::kStop);
}

Seconds Engine::DropRetryAfter(Seconds now) const {
  const Seconds slo_s = config_.admission.ttft_slo_s;
  if (const Seconds wait_s = QueueForecast(now); wait_s >= 0 && wait_s < 2 * slo_s) {
    // When a request of the mean shape would be forecast to meet the SLO again, as the door's
    // Retry-After under this policy.
    const Seconds prefill_s = admission_.PrefillEstimate(TypicalPromptTokens());
    return std::max(1.0, std::ceil(wait_s + prefill_s - slo_s));
  }
  const Seconds w = QueueDelayEstimate();
  return std::isfinite(w) ? std::max(1.0, std::ceil(w)) : 1.0;
}

}  // namespace spillway
