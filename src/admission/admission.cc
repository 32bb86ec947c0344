#include "admission/admission.h"

#include <algorithm>
#include <cmath>

namespace spillway {

AdmissionController::AdmissionController(AdmissionConfig config, Seconds now)
    : config_(std::move(config)),
      estimator_(config_.estimator),
      output_lengths_(config_.output_lengths),
      forecast_errors_(config_.forecast_errors, kForecastPriorMargin * config_.ttft_slo_s),
      fair_share_(config_.fair_share) {
  for (const auto& [tenant, limit] : config_.tenants) {
    buckets_.emplace(tenant, TokenBucket(limit.rate_rps, limit.burst, now));
  }
}

std::int32_t AdmissionController::EffectiveSlots(const EngineStats& stats) const {
  std::int32_t slots = stats.max_num_seqs;
  if (mean_prompt_tokens_ > 0 && stats.block_size > 0 && stats.num_total_blocks > 0) {
    const double blocks_per_request =
        std::ceil((mean_prompt_tokens_ + mean_output_tokens_) / stats.block_size);
    const double kv_slots = std::floor(stats.num_total_blocks / blocks_per_request);
    slots = static_cast<std::int32_t>(std::clamp(kv_slots, 1.0, static_cast<double>(slots)));
  }
  return slots;
}

Seconds AdmissionController::DecodeStepEstimate(const EngineStats& stats) const {
  const auto& table = config_.decode_step_s_by_batch;
  if (table.empty()) {
    return estimator_.step_time_s();
  }
  const std::int64_t batch = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(stats.num_running) + stats.num_waiting + 1, 1,
      std::min<std::int64_t>(EffectiveSlots(stats), static_cast<std::int64_t>(table.size())));
  return table[static_cast<std::size_t>(batch - 1)] * stats.step_pace;
}

Seconds AdmissionController::FullBatchStepEstimate(const EngineStats& stats) const {
  const auto& table = config_.decode_step_s_by_batch;
  if (table.empty()) {
    return estimator_.step_time_s();
  }
  const std::int64_t batch =
      std::clamp<std::int64_t>(EffectiveSlots(stats), 1, static_cast<std::int64_t>(table.size()));
  return table[static_cast<std::size_t>(batch - 1)] * stats.step_pace;
}

double AdmissionController::ServiceRateEstimate(const EngineStats& stats) const {
  if (estimator_.service_rate_rps() > 0) {
    return estimator_.service_rate_rps();
  }
  // Cold start: a full batch of mean-sized requests turns over every mean-output decode steps
  // plus the time to prefill its prompts beside a full batch's decodes (without it, a burst of
  // 64-token prompts on 27 slots was admitted at 54 req/s, served at 34: 18 of 79 late).
  const Seconds step_s = estimator_.step_time_s();
  if (mean_output_tokens_ > 0 && step_s > 0) {
    const std::int32_t slots = EffectiveSlots(stats);
    EngineStats full;
    full.num_running = slots;
    full.num_waiting = 0;
    const double tps = PrefillRate(full);
    const Seconds prefill_s =
        tps > 0 ? slots * (mean_prompt_tokens_ / tps + PromptOverhead()) : 0.0;
    return slots / (mean_output_tokens_ * step_s + prefill_s);
  }
  return 0;
}

std::int32_t AdmissionController::QueuedBeyondBatch(std::int32_t waiting,
                                                    const EngineStats& stats) const {
  const std::int32_t free_slots = std::max(0, EffectiveSlots(stats) - stats.num_running);
  return std::max(0, waiting - free_slots);
}

double AdmissionController::PrefillBacklogAhead(const EngineStats& stats,
                                                std::int32_t prompt_tokens) const {
  // Under priority scheduling only the requests queued ahead count (Scheduler::StatsAhead).
  const bool ahead = stats.prefill_backlog_ahead_tokens >= 0;
  const auto backlog = static_cast<double>(ahead ? stats.prefill_backlog_ahead_tokens
                                                 : stats.prefill_backlog_tokens);
  const double share = config_.long_prefill_step_share;
  const bool short_prompt = prompt_tokens >= 0 && config_.long_prefill_token_threshold > 0 &&
                            prompt_tokens <= config_.long_prefill_token_threshold;
  if (!short_prompt || share <= 0 || share >= 1) {
    return backlog;
  }
  const auto long_backlog = static_cast<double>(std::max<std::int64_t>(
      0, ahead ? stats.long_prefill_backlog_ahead_tokens : stats.long_prefill_backlog_tokens));
  // While the short backlog prefills, the long prefill takes `share` of each step beside it.
  const double short_backlog = std::max(0.0, backlog - long_backlog);
  return short_backlog + std::min(long_backlog, short_backlog * share / (1.0 - share));
}

Seconds AdmissionController::QueueDelayEstimate(const EngineStats& stats,
                                                std::int32_t prompt_tokens) const {
  const std::int32_t waiting =
      stats.num_waiting_ahead >= 0 ? stats.num_waiting_ahead : stats.num_waiting;
  const double backlog = PrefillBacklogAhead(stats, prompt_tokens);
  if (waiting == 0) {
    return 0;
  }
  // Requests that fit in the free batch slots start at the next step; only the rest wait
  // for completions.
  const std::int32_t queued = QueuedBeyondBatch(waiting, stats);
  Seconds w = 0;
  bool known = queued == 0;
  if (const double mu = ServiceRateEstimate(stats); mu > 0) {
    w = queued / mu;
    known = true;
  }
  if (const double tps = PrefillRate(stats); tps > 0) {
    w = std::max(w, backlog / tps + waiting * PromptOverhead());
    known = true;
  }
  return known ? w : kNever;
}

void AdmissionController::OnAdmitted(const AdmissionRequest& request,
                                     const AdmissionDecision& decision) {
  const double alpha = 1.0 / std::max(1.0, config_.request_mean_window);
  AdmissionRequest admitted = request;
  admitted.max_output_tokens = decision.max_output_tokens;  // as clamped
  const double output = ExpectedOutput(admitted);
  if (mean_prompt_tokens_ == 0) {
    mean_prompt_tokens_ = request.prompt_tokens;
    mean_output_tokens_ = output;
    return;
  }
  mean_prompt_tokens_ += alpha * (request.prompt_tokens - mean_prompt_tokens_);
  mean_output_tokens_ += alpha * (output - mean_output_tokens_);
}

double AdmissionController::ModelPrefillRate(double decodes) const {
  const auto& table = config_.prefill_tokens_per_s_by_decodes;
  const double d = std::clamp(decodes, 0.0, static_cast<double>(table.size() - 1));
  const auto lo = static_cast<std::size_t>(d);
  const std::size_t hi = std::min(lo + 1, table.size() - 1);
  return table[lo] + (d - static_cast<double>(lo)) * (table[hi] - table[lo]);
}

double AdmissionController::PrefillRate(const EngineStats& stats) const {
  const auto& table = config_.prefill_tokens_per_s_by_decodes;
  if (table.empty()) {
    return estimator_.prefill_tokens_per_s();
  }
  const std::int32_t ahead =
      stats.num_waiting_ahead >= 0 ? stats.num_waiting_ahead : stats.num_waiting;
  const double model = ModelPrefillRate(std::int64_t{stats.num_running} + ahead / 2);
  if (estimator_.prefill_capacity_measured()) {
    // The measurement, carried to this batch by the model's shape: measured beside a full
    // batch, it is far below what a step beside four decodes prefills (a 128k prompt the
    // engine prefills in 8.7 s was refused as needing over a minute).
    return estimator_.prefill_tokens_per_s() * model /
           ModelPrefillRate(estimator_.prefill_capacity_decodes());
  }
  return std::max(model, estimator_.prefill_tokens_per_s());
}

namespace {
Seconds PrefillTime(std::int32_t prompt_tokens, double tokens_per_s, Seconds step_s) {
  const Seconds chunked = tokens_per_s > 0 ? prompt_tokens / tokens_per_s : 0.0;
  return std::max(step_s, chunked);
}
}  // namespace

Seconds AdmissionController::PrefillEstimate(std::int32_t prompt_tokens) const {
  return PrefillTime(prompt_tokens, estimator_.prefill_tokens_per_s(), estimator_.step_time_s());
}

Seconds AdmissionController::PrefillEstimate(std::int32_t prompt_tokens,
                                             const EngineStats& stats) const {
  return PrefillTime(prompt_tokens, PrefillRate(stats), estimator_.step_time_s()) +
         PromptOverhead();
}

Seconds AdmissionController::PromptOverhead() const {
  return estimator_.prefill_capacity_measured() ? 0.0 : config_.prefill_overhead_per_prompt_s;
}

Seconds AdmissionController::KvRoomWait(std::int32_t prompt_tokens,
                                        const EngineStats& stats) const {
  if (stats.block_size <= 0 || stats.num_running == 0) {
    return 0;  // an idle engine has the whole pool (a prompt longer than it is a 400 before)
  }
  // Its prompt's blocks, and a block of growth per running sequence while it prefills.
  const std::int64_t need =
      (std::int64_t{prompt_tokens} + stats.block_size - 1) / stats.block_size + stats.num_running;
  const std::int64_t deficit = need - stats.num_free_blocks;
  if (deficit <= 0) {
    return 0;
  }
  // Blocks come back as running requests finish: mu x the blocks a running request holds.
  const double held_per_request =
      static_cast<double>(stats.num_total_blocks - stats.num_free_blocks) / stats.num_running;
  const double mu = ServiceRateEstimate(stats);
  return mu > 0 && held_per_request > 0 ? deficit / (mu * held_per_request) : 1.0;
}

AdmissionDecision AdmissionController::Refusal(OverloadReason reason, Seconds retry_after_s,
                                               AdmissionDecision base) {
  AdmissionDecision d = std::move(base);
  d.verdict = RefusalVerdict(reason);
  d.reason = reason;
  // Whole seconds, at least 1 (RFC 9110 §10.2.3 delay-seconds); capped at an hour.
  d.retry_after_s = std::clamp(std::ceil(retry_after_s), 1.0, 3600.0);
  d.deadline_s = kNever;
  return d;
}

AdmissionDecision AdmissionController::DecideRateLimit(const AdmissionRequest& request,
                                                       Seconds now) {
  AdmissionDecision d;
  d.max_output_tokens = request.max_output_tokens;
  if (!buckets_.empty()) {
    if (auto it = buckets_.find(request.tenant); it != buckets_.end()) {
      if (!it->second.TryTake(now)) {
        return Reject(OverloadReason::kRateLimited, it->second.TimeUntilAvailable(now), d);
      }
    }
  }
  return d;
}

AdmissionDecision AdmissionController::Decide(const AdmissionRequest& request,
                                              const EngineStats& stats, Seconds now,
                                              const TtftForecastFn& forecast) {
  if (draining_) {
    return DecidePolicy(request, stats, now);  // 503 draining before spending a token
  }
  const AdmissionDecision limited = DecideRateLimit(request, now);
  if (!limited.admitted()) {
    return limited;
  }
  AdmissionDecision d = DecidePolicy(request, stats, now, forecast);
  if (fair_share_.enabled()) {
    d = ShareFairly(request, std::move(d), now);
  }
  if (d.admitted()) {
    OnAdmitted(request, d);
    CountAdmission(request.priority, now);
  }
  return d;
}

AdmissionDecision AdmissionController::ShareFairly(const AdmissionRequest& request,
                                                   AdmissionDecision d, Seconds now) {
  const std::string_view flow = request.flow.empty() ? request.tenant : request.flow;
  fair_share_.OnOffered(flow, now);
  if (d.admitted() && fair_share_.ShouldYield(flow, now)) {
    // Served above its share while another flow starves: its place in the queue goes to the
    // starved flow's next request. A second later the shares will have moved.
    d = Reject(OverloadReason::kFairShare, 1.0, d);
  }
  if (d.admitted()) {
    fair_share_.OnAdmitted(flow, now);
  } else if (d.verdict == Verdict::kShed || d.verdict == Verdict::kHardLimit) {
    if (d.reason != OverloadReason::kFairShare && d.reason != OverloadReason::kDraining) {
      fair_share_.OnRefusedForLoad(flow, now);
    }
  }
  return d;
}

void AdmissionController::CountAdmission(std::int32_t priority, Seconds now) {
  if (config_.priority_aging_s <= 0) {
    return;
  }
  if (class_rates_.size() >= kMaxTrackedClasses && !class_rates_.contains(priority)) {
    return;  // classes are client-chosen integers: the map stays bounded
  }
  auto [it, fresh] = class_rates_.try_emplace(priority);
  ClassRate& c = it->second;
  if (fresh) {
    c.first_s = now;
    c.last_s = now;
  }
  c.count = c.CountAt(now, config_.class_rate_time_constant_s) + 1;
  c.last_s = now;
}

std::vector<ClassRateEstimate> AdmissionController::UrgentClassRates(std::int32_t priority,
                                                                     Seconds now) const {
  std::vector<ClassRateEstimate> urgent;
  if (config_.priority_aging_s <= 0) {
    return urgent;
  }
  for (const auto& [cls, c] : class_rates_) {
    if (cls >= priority) {
      break;
    }
    // The decayed count over the decayed length of the time seen so far (no warm-up bias:
    // the first seconds of a class are not read as a low rate).
    const double tau = config_.class_rate_time_constant_s;
    const Seconds seen_s = std::max(now - c.first_s, 1.0);
    urgent.push_back({cls, c.CountAt(now, tau) / (tau * (1.0 - std::exp(-seen_s / tau)))});
  }
  return urgent;
}

Seconds AdmissionController::WithOvertakers(Seconds w, std::int32_t priority,
                                            const EngineStats& stats, Seconds now) const {
  if (config_.priority_aging_s <= 0 || !std::isfinite(w)) {
    return w;
  }
  const double mu = ServiceRateEstimate(stats);
  const double tps = PrefillRate(stats);
  // The admission rate of each more urgent class, requests/s, and how long it can overtake.
  std::vector<std::pair<double, Seconds>> urgent;
  for (const ClassRateEstimate& c : UrgentClassRates(priority, now)) {
    urgent.emplace_back(c.rate_rps, (priority - c.priority) * config_.priority_aging_s);
  }
  if (urgent.empty()) {
    return w;
  }
  // Fixed point of W = w + (overtakers during W) / mu, by a few iterations from w (monotone;
  // each overtaker also brings its prompt to prefill).
  Seconds total = w;
  for (int i = 0; i < 8; ++i) {
    double overtakers = 0;
    for (const auto& [rate, window_s] : urgent) {
      overtakers += rate * std::min(total, window_s);
    }
    Seconds extra = mu > 0 ? overtakers / mu : 0.0;
    if (tps > 0) {
      extra = std::max(extra, overtakers * mean_prompt_tokens_ / tps);
    }
    total = w + extra;
  }
  return total;
}

Seconds AdmissionController::ForecastTtft(const AdmissionRequest& request,
                                          const TtftForecastFn& forecast,
                                          AdmissionDecision* d) const {
  const Seconds f = forecast(config_.ttft_slo_s);
  if (!std::isfinite(f)) {
    d->ttft_forecast_s = kNever;  // queue_delay_est_s stays W_est, for Retry-After
    return kNever;
  }
  d->ttft_forecast_s = f;
  d->ttft_margin_s = forecast_errors_.Margin(request.priority, request.prefill());
  d->queue_delay_est_s = std::max(0.0, f - d->prefill_est_s);
  return f + d->ttft_margin_s;
}

AdmissionDecision AdmissionController::DecidePolicy(const AdmissionRequest& request,
                                                    const EngineStats& stats, Seconds now,
                                                    const TtftForecastFn& forecast) const {
  AdmissionDecision d;
  d.max_output_tokens = request.max_output_tokens;
  const bool predictive = config_.policy == AdmissionPolicy::kPredictive ||
                          config_.policy == AdmissionPolicy::kForecast;
  d.queue_delay_est_s =
      WithOvertakers(QueueDelayEstimate(stats, request.prefill()), request.priority, stats, now);
  d.prefill_est_s = PrefillEstimate(request.prefill(), stats);
  Seconds retry_s = std::isfinite(d.queue_delay_est_s) ? d.queue_delay_est_s : 1.0;

  if (draining_) {
    return Reject(OverloadReason::kDraining, retry_s, d);
  }
  // The hard limits hold under every policy that has them (unbounded has none unless set).
  // Waiting requests that the batch's free slots take at the next step are not queued: a burst
  // landing within one step fills the slots, then the queue.
  if (config_.max_num_queued_reqs > 0 &&
      QueuedBeyondBatch(stats.num_waiting, stats) >= config_.max_num_queued_reqs) {
    return Reject(OverloadReason::kQueueFull, retry_s, d);
  }
  // A prompt longer than the bound on its own goes into an empty queue (as Kafka returns a
  // record batch larger than fetch.max.bytes when it is the first): a 503 would have it
  // retried for ever, and one request alone is no backlog.
  if (config_.max_num_queued_tokens > 0 && stats.waiting_prompt_tokens > 0 &&
      stats.waiting_prompt_tokens + request.prefill() > config_.max_num_queued_tokens) {
    return Reject(OverloadReason::kQueuedTokensFull, retry_s, d);
  }
  if (predictive) {
    // A prompt whose prefill alone outlasts the TTFT SLO cannot meet it however short the
    // queue, and no retry would change that: it is refused only for the queue ahead of it
    // (admitted when nothing waits ahead), not for its own length.
    const Seconds ttft_budget_s = std::max(config_.ttft_slo_s, d.prefill_est_s);
    Seconds ttft_est_s = d.queue_delay_est_s + d.prefill_est_s;
    const bool forecasting = config_.policy == AdmissionPolicy::kForecast && forecast &&
                             d.prefill_est_s <= config_.ttft_slo_s;
    if (forecasting) {
      ttft_est_s = ForecastTtft(request, forecast, &d);
      if (std::isfinite(ttft_est_s) && ttft_est_s > ttft_budget_s) {
        retry_s = ttft_est_s - ttft_budget_s;  // when this forecast would meet the SLO
      }
    }
    const bool late = ttft_est_s > ttft_budget_s;
    // No room for this prompt's KV beside the running requests: the scheduler would keep it
    // waiting (its whole prefill must fit, SchedulerConfig::reserve_prefill_blocks) until
    // they finish, past its queue-ingress deadline; a long prompt that fits the pool only
    // alone was admitted and dropped at the head on every retry. A forecast waits for that
    // room itself.
    const Seconds kv_wait_s = forecasting ? 0.0 : KvRoomWait(request.prompt_tokens, stats);
    const bool kv_full = stats.kv_usage > config_.kv_headroom || kv_wait_s > 0;
    const Seconds kv_retry_s = std::max(retry_s, kv_wait_s);
    if (late && kv_full) {
      return Reject(OverloadReason::kQueueDelayAndKvSaturation, kv_retry_s, d);
    }
    if (late) {
      return Reject(OverloadReason::kQueueDelayExceeded, retry_s, d);
    }
    if (kv_full) {
      return Reject(OverloadReason::kKvSaturation, kv_retry_s, d);
    }
    // Can the whole request finish before the server's deadline answers 504? Planned against
    // kDeadlineMargin of the deadline: the step estimate is a model, not a promise. Its length
    // is max_tokens under ignore_eos, else one of those learned for requests like it: it
    // passes when a share q = deadline_output_quantile of them would finish in time (the
    // quantile's length fits), or at least q of those an idle engine would finish. Before any
    // are learned nothing is known of where the model stops (a cap is not a length): not
    // checked; requests that run into the deadline teach it (Engine::AbortAtDeadline).
    const OutputQuery query = OutputQueryOf(request);
    const Seconds step_s = output_lengths_.Known(query) ? DecodeStepEstimate(stats) : 0.0;
    const double q = config_.deadline_output_quantile;
    d.decode_est_s = step_s > 0 ? output_lengths_.Quantile(query, q) * step_s : 0.0;
    const Seconds budget_s = kDeadlineMargin * config_.request_deadline_s;
    const Seconds slack_s = budget_s - ttft_est_s;
    // An idle engine's figures are the current ones when the engine is idle (so the two never
    // disagree: a live engine's pace and the forecast's margin are in both), else the model's
    // idle batch at the current pace with a rate measured under load carried to the idle
    // batch first (PrefillRate), so load never makes a 400 (issue 12, finding 6).
    const bool idle = stats.num_running == 0 && stats.num_waiting == 0;
    const auto& table = config_.decode_step_s_by_batch;
    const Seconds idle_slack_s = idle ? slack_s : budget_s - PrefillEstimate(request.prefill(), {});
    if (slack_s < 0) {
      // The first token alone comes after the deadline, whatever the output: 400 when even an
      // idle engine's prefill of this prompt would (no retry helps), else 429.
      if (idle_slack_s < 0) {
        AdmissionDecision never = Reject(OverloadReason::kMaxTokensExceedsDeadline, 1.0, d);
        never.max_output_tokens = 0;
        return never;
      }
      return Reject(OverloadReason::kDeadlineUnreachable, retry_s, d);
    }
    const double finish_now =
        step_s > 0 ? output_lengths_.FractionAtMost(query, slack_s / step_s) : 1.0;
    if (finish_now < q) {
      // The same at an idle engine's state, so an idle engine never answers a 429 that no
      // retry can change.
      const Seconds idle_step_s = idle || table.empty() ? step_s : table.front() * stats.step_pace;
      const double finish_idle = output_lengths_.FractionAtMost(query, idle_slack_s / idle_step_s);
      // A clamp is planned at a full batch's step time (the batch fills while it decodes: at
      // the current batch's, clamped requests ran into the deadline), and never above the
      // configured degrade_max_tokens.
      const double fit = std::min<double>(std::floor(slack_s / FullBatchStepEstimate(stats)),
                                          config_.degrade_max_tokens);
      if (config_.degrade_max_tokens > 0 && fit >= 1) {
        d.verdict = Verdict::kDegrade;
        d.max_output_tokens = static_cast<std::int32_t>(fit);
      } else if (finish_now < q * finish_idle) {
        // The load makes it miss: of the requests like it that an idle engine would finish in
        // time, fewer than the share q would now. A retry can succeed.
        return Reject(OverloadReason::kDeadlineUnreachable, retry_s, d);
      } else if (finish_idle < 1 - q) {
        // Too long even for an idle engine: certain under ignore_eos, and for nearly all
        // requests like it by what they generated (they ran to their cap or into the
        // deadline): no retry helps, so 400 (with what would fit).
        AdmissionDecision never = Reject(OverloadReason::kMaxTokensExceedsDeadline, 1.0, d);
        never.max_output_tokens =
            static_cast<std::int32_t>(std::max(0.0, std::floor(idle_slack_s / idle_step_s)));
        return never;
      }
      // Else many requests like it are too long whatever the load, but this one may well not
      // be: admitted, the deadline tells (a 429 would be retried for ever, a 400 would refuse
      // what may be served).
    }
  }
  if (config_.queue_deadline.value_or(predictive)) {
    // The time left to start within the SLO, and at least half the SLO for a prompt whose
    // prefill takes more than that (admitted with nothing ahead: it starts at the next step).
    d.deadline_s = now + config_.ttft_slo_s - std::min(d.prefill_est_s, 0.5 * config_.ttft_slo_s);
  }
  if (config_.degrade_max_tokens > 0 && d.max_output_tokens > config_.degrade_max_tokens &&
      (d.queue_delay_est_s > config_.degrade_queue_delay_fraction * config_.ttft_slo_s ||
       stats.kv_usage > config_.degrade_kv_usage)) {
    d.verdict = Verdict::kDegrade;
    d.max_output_tokens = config_.degrade_max_tokens;
  }
  return d;
}

}  // namespace spillway
