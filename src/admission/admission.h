#pragma once
// Admission control: one pure decision per arriving request, before any engine work.
//
//   Decide(request, engine stats, now) -> Admit | Degrade(clamped max_tokens)
//                                         | Shed | HardLimit | NeverFits (reason, retry_after_s)
// The HTTP status of a refusal is the overload contract's for its reason, not decided here.
//
// Order of checks: draining (503) -> the tenant's token bucket (429 rate_limited) -> hard
// queue limits when set, under every policy (503 queue_full / queued_tokens_full; the request
// limit counts the waiting requests beyond the batch's free slots) -> the policy:
//   unbounded   nothing more (the naive FIFO baseline that collapses under overload; no hard
//               limit unless one is set);
//   tail-drop   only the hard limits above, 32 queued requests unless set (vLLM's
//               max_num_queued_reqs / _tokens, 503);
//   predictive  W_est = max(Q / mu_hat, prefill backlog / prefill throughput) from the
//               *measured* ServiceEstimator; rejects with 429 queue_delay_exceeded when
//               W_est + t_prefill_est > TTFT SLO, 429 kv_saturation when KV usage exceeds the
//               headroom threshold, queue_delay_and_kv_saturation for both
//               (overload-and-failure-handling.txt §2, §5.2; kv_saturation also when the
//               prompt's blocks do not fit beside the running requests now, KvRoomWait),
//               and 429 deadline_unreachable
//               when W_est + t_prefill_est + its output x the decode step time at the batch
//               the request joins passes the server's request deadline (the gateway's 504,
//               §3.2); its output is max_tokens under ignore_eos, else a high quantile of the
//               lengths learned from completions (output_lengths.h). Retry-After =
//               ceil(W_est), >= 1 s.
//   forecast    predictive, with the time to the first token forecast for this request by
//               stepping a copy of the engine forward (Engine::ForecastFirstToken: the batch,
//               the KV blocks, the chunked prefill budget, the queue ahead in its order, the
//               running requests' learned output lengths) instead of W_est + t_prefill_est:
//               429 queue_delay_exceeded when forecast + margin > TTFT SLO, the margin from
//               the forecasts' measured error (forecast_errors.h). The forecast is run to
//               the SLO and no further (a refusal costs one forecast to it: 17 us on the
//               reference engine, bench/forecast_bench.cc); Retry-After is ceil(W_est)
//               beyond it, else ceil(forecast + margin - SLO), >= 1 s. The KV check is the
//               headroom alone (the forecast waits for room itself); prompts whose
//               t_prefill_est exceeds the SLO are judged as under predictive.
//               Q counts waiting requests beyond the free slots of a batch limited by
//               max_num_seqs *and* by KV blocks; before mu_hat is measured, mu comes from a
//               cold-start prior (slots / (mean max_tokens x modelled step time)).
// Then degradation: above a load threshold, max_tokens is clamped (§3.3: 256 -> 64).
// Under predictive (or when queue_deadline is set) an admitted request gets a queue-ingress
// deadline now + (TTFT SLO - t_prefill_est) (§3.2), dropped at the queue head after it; a
// prompt whose t_prefill_est exceeds half the SLO gets now + SLO / 2.
// A prompt whose t_prefill_est alone exceeds the TTFT SLO is judged against t_prefill_est
// instead (admitted when nothing waits ahead): its length is not overload, no retry helps.
//
// Not thread-safe; no clock (now is passed in), no I/O.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "admission/fair_share.h"
#include "admission/forecast_errors.h"
#include "admission/output_lengths.h"
#include "admission/service_estimator.h"
#include "admission/token_bucket.h"
#include "sched/scheduler.h"

namespace spillway {

enum class AdmissionPolicy : std::uint8_t { kUnbounded, kTailDrop, kPredictive, kForecast };

/// The policies' names, in the order of the enum (for option checks and help texts).
inline constexpr std::array<std::string_view, 4> kAdmissionPolicyNames = {"unbounded", "tail-drop",
                                                                          "predictive", "forecast"};

/// Parses "unbounded", "tail-drop", "predictive", "forecast"; returns false for anything else.
bool ParseAdmissionPolicy(std::string_view name, AdmissionPolicy* out);
std::string_view ToString(AdmissionPolicy policy);

/// Stable tokens for X-Overload-Reason and metric labels; each is a row of the overload contract
/// (api/overload_contract.h), which gives its HTTP status and error type.
enum class OverloadReason : std::uint8_t {
  kNone,
  kRateLimited,
  kQueueDelayExceeded,
  kKvSaturation,
  kQueueDelayAndKvSaturation,
  kQueueFull,
  kQueuedTokensFull,
  kDraining,
  kQueueDeadlineExceeded,  ///< admitted, then dropped at the queue head (decided by the engine)
  kDeadlineUnreachable,    ///< predictive: cannot finish before the server's request deadline
  kFairShare,   ///< admissible, but its flow is served above its share while another starves
  kNoEndpoint,  ///< the gateway: no endpoint of the pool takes work (routing/router.h)
  /// Never servable as asked (400; no retry helps):
  /// Not even an idle engine finishes max_tokens (max_output_tokens: what fits) or, with
  /// max_output_tokens 0, the prompt's prefill before the deadline.
  kMaxTokensExceedsDeadline,
  kContextLengthExceeded,  ///< prompt + max_tokens > max_model_len
  kKvCapacityExceeded,     ///< prompt + max_tokens need more KV blocks than the pool has (last)
};
std::string_view ToString(OverloadReason reason);

/// Requests are planned to finish within this fraction of the server's request deadline (the
/// decode estimate is a model; measured: a clamp to 100% of it ended in 504s).
inline constexpr double kDeadlineMargin = 0.9;

/// The hard queue limit (max_num_queued_reqs) a policy gets when the configuration gives none:
/// tail-drop 32, the reference Q_max (admission-control reference §4); predictive 4096, a
/// safety net behind the prediction; unbounded 0 (none). Shared by the simulator and the server.
inline constexpr std::int32_t kTailDropDefaultQueuedReqs = 32;
inline constexpr std::int32_t kPredictiveSafetyQueuedReqs = 4096;
std::int32_t DefaultMaxNumQueuedReqs(AdmissionPolicy policy);

struct TenantLimit {
  double rate_rps = 0;  ///< token refill rate, requests/s
  double burst = 1;     ///< bucket capacity, requests
};

struct AdmissionConfig {
  AdmissionPolicy policy = AdmissionPolicy::kPredictive;
  Seconds ttft_slo_s = 1.0;
  double kv_headroom = 0.85;  ///< reject new prefills above this KV usage (predictive)
  /// Hard limits (tail-drop; also enforced under predictive). 0 = no limit.
  std::int32_t max_num_queued_reqs = 0;
  /// Waiting prompt tokens; a prompt longer than this alone still enters an empty queue.
  std::int64_t max_num_queued_tokens = 0;
  /// Queue-ingress deadlines for admitted requests; unset = under predictive only.
  std::optional<bool> queue_deadline;
  /// Degradation: clamp max_tokens to degrade_max_tokens when W_est exceeds
  /// degrade_queue_delay_fraction x TTFT SLO or KV usage exceeds degrade_kv_usage. Off when
  /// degrade_max_tokens is 0.
  std::int32_t degrade_max_tokens = 0;
  double degrade_queue_delay_fraction = 0.5;
  double degrade_kv_usage = 0.75;
  /// Per-tenant token buckets; tenants not listed are not rate-limited.
  std::map<std::string, TenantLimit, std::less<>> tenants;
  ServiceEstimatorConfig estimator;
  /// The server's request deadline, seconds after arrival (kNever = none). Under predictive, a
  /// request whose estimated completion W_est + t_prefill_est + max_output x step time falls
  /// after kDeadlineMargin of it is refused (429 deadline_unreachable; 400
  /// max_tokens_exceeds_deadline, with
  /// max_output_tokens set to what would fit, when it would not fit an idle engine either) or,
  /// with degradation on, clamped to the max_tokens that fit: admitting it would only spend
  /// engine time on a certain 504.
  Seconds request_deadline_s = kNever;
  /// Decode step time by batch size for that check, seconds: element b-1 is a step of b
  /// decodes (priors.h DecodeStepTimes, from the cost model). The check uses the batch the
  /// request will join, min(slots, running + waiting + 1). Empty: the measured mean step time.
  std::vector<Seconds> decode_step_s_by_batch;
  /// Prefill throughput by the decodes sharing a step, tokens/s: element d for d decodes
  /// (priors.h PrefillRates, from the cost model). Until the estimator has measured a step with
  /// a full token budget, W_est and t_prefill_est read it at the decodes the request will
  /// share its steps with (running + half the waiting ahead; at least the estimator's lower
  /// bound). Empty: the estimator's value alone.
  std::vector<double> prefill_tokens_per_s_by_decodes;
  /// What a prompt costs beyond its tokens, seconds: the cost model's per-sequence and
  /// first-token overheads of the step its last chunk runs in (profile per_seq_overhead_s +
  /// first_token_overhead_s). Until the estimator has measured prefill capacity (the
  /// measurement includes it), W_est adds it for every prompt waiting ahead and t_prefill_est
  /// for the request's own: the throughput table counts one prompt a step, and a burst of
  /// short prompts is mostly this (a100-llama3-8b's 3.3 ms a prompt: 15 of 108 admitted
  /// 64-token prompts were late without it, tests/engine/cold_start_test.cc).
  Seconds prefill_overhead_per_prompt_s = 0;
  /// The scheduler's priority_aging_s under priority scheduling, seconds; 0 under FCFS. With
  /// it, W_est for a request of class p also counts the requests of more urgent classes q
  /// expected to overtake it while it waits: their admission rate x min(wait, (p - q) x aging)
  /// (aging bounds how long a class can be overtaken). A request that would wait past its
  /// TTFT budget that way is refused at the door (429 queue_delay_exceeded with Retry-After)
  /// instead of waiting for its queue-ingress deadline.
  Seconds priority_aging_s = 0;
  /// The scheduler's long prompts (SchedulerConfig::long_prefill_token_threshold, 0 = none)
  /// and the fraction of a step's token budget a long prefill takes while others wait
  /// (long_prefill_max_chunk_tokens / max_num_batched_tokens). With them, the prefill backlog
  /// ahead of a short prompt counts a long prompt's tokens only as far as they share the
  /// steps that prefill the short ones: a 100k-token prompt ahead does not delay a 200-token
  /// one by its whole prefill (issue 12, finding 6).
  std::int32_t long_prefill_token_threshold = 0;
  double long_prefill_step_share = 0;
  /// Time constant of the admission rate per class, seconds.
  Seconds class_rate_time_constant_s = 5;
  /// Time constant of the running means of admitted requests' prompt and expected output
  /// tokens, in requests (they size the KV-limited batch and the cold-start service-rate
  /// prior).
  double request_mean_window = 50;
  /// The output lengths learned from completions (output_lengths.h).
  OutputLengthConfig output_lengths;
  /// The deadline check plans a request's decode at this quantile of the output lengths
  /// learned for its max_tokens (its max_tokens under ignore_eos or before any are learned).
  double deadline_output_quantile = 0.9;
  /// The forecast policy's margin, from its measured errors per class (forecast_errors.h).
  PredictionErrorConfig forecast_errors;
  /// Fair shedding across flows (admission/fair_share.h); off unless min_share_ratio > 0.
  FairShareConfig fair_share;
};

/// The forecast policy's question to the engine: seconds from now until the request being
/// decided would see its first token if admitted now, or kNever when not within `horizon_s`.
/// Asked at most once per decision, after the checks that need no forecast.
using TtftForecastFn = std::function<Seconds(Seconds horizon_s)>;

/// What the driver asks about.
struct AdmissionRequest {
  std::string_view tenant;
  std::int32_t prompt_tokens = 0;
  std::int32_t max_output_tokens = 0;
  std::int32_t priority = 0;  ///< scheduling class, lower is more urgent
  /// vLLM's ignore_eos: the request generates exactly max_output_tokens. Otherwise its length
  /// is unknown to admission, which expects what it learned from completions
  /// (AdmissionController::ExpectedOutput).
  bool ignore_eos = false;
  /// Its flow for fair shedding (admission/fair_share.h): the fairness ID; empty: the tenant.
  std::string_view flow = {};
  /// The prompt tokens it will prefill: all but those the prefix cache holds; -1: all of them.
  std::int32_t prefill_tokens = -1;
  std::int32_t prefill() const { return prefill_tokens >= 0 ? prefill_tokens : prompt_tokens; }
};

/// The forecast policy's margin before a class has measured errors, as a fraction of the TTFT
/// SLO: a cold server's first forecasts near the SLO were late live (2 to 9 of 30 to 38
/// admitted in a burst of 60 sent at once), the step pace and the margin not yet measured.
inline constexpr double kForecastPriorMargin = 0.1;

/// A scheduling class's admission rate (priority scheduling).
struct ClassRateEstimate {
  std::int32_t priority = 0;
  double rate_rps = 0;  ///< admissions per second, exponentially weighted
};

/// What admission decided. A refusal is one of three kinds, each following from its reason
/// (RefusalVerdict); the drivers take the HTTP status for the reason from the overload contract
/// (engine/contract_status.h), so the kinds and the statuses agree row by row (a test checks).
enum class Verdict : std::uint8_t {
  kAdmit,
  kDegrade,    ///< admitted with max_tokens clamped
  kShed,       ///< refused for load: a retry after retry_after_s can succeed (429)
  kHardLimit,  ///< refused at a hard limit: a queue bound or draining (503)
  kNeverFits,  ///< can never be served as asked: no retry helps (400)
};
std::string_view ToString(Verdict verdict);

/// The kind of refusal `reason` is (kAdmit for kNone).
Verdict RefusalVerdict(OverloadReason reason);

struct AdmissionDecision {
  Verdict verdict = Verdict::kAdmit;
  OverloadReason reason = OverloadReason::kNone;
  Seconds retry_after_s = 0;           ///< whole seconds >= 1 on a rejection
  std::int32_t max_output_tokens = 0;  ///< possibly clamped (kDegrade)
  Seconds deadline_s = kNever;         ///< queue-ingress deadline for an admitted request
  Seconds queue_delay_est_s = 0;       ///< W_est at decision time
  Seconds prefill_est_s = 0;           ///< t_prefill_est for this request
  /// The output tokens planned against the request deadline x step time (predictive with a
  /// request deadline).
  Seconds decode_est_s = 0;
  /// Forecast policy: the forecast TTFT (with the time of the overtakers expected under
  /// priority scheduling), seconds, kNever beyond the horizon; -1 when none was made.
  Seconds ttft_forecast_s = -1;
  Seconds ttft_margin_s = 0;  ///< the margin added to it (ForecastErrors::Margin)
  bool admitted() const { return verdict == Verdict::kAdmit || verdict == Verdict::kDegrade; }
};

class AdmissionController {
 public:
  /// `now` starts the tenants' token buckets.
  AdmissionController(AdmissionConfig config, Seconds now);

  /// The full decision: draining, the tenant's token bucket, then the policy. `forecast` is
  /// read by the forecast policy alone (without it, that policy decides as predictive).
  AdmissionDecision Decide(const AdmissionRequest& request, const EngineStats& stats, Seconds now,
                           const TtftForecastFn& forecast = {});

  /// The tenant's token bucket alone: 429 rate_limited, or admitted. Lets a driver with
  /// several engines keep one set of buckets in front of per-engine policies.
  AdmissionDecision DecideRateLimit(const AdmissionRequest& request, Seconds now);

  /// Everything but the token buckets.
  AdmissionDecision DecidePolicy(const AdmissionRequest& request, const EngineStats& stats,
                                 Seconds now, const TtftForecastFn& forecast = {}) const;

  /// A request of class `priority` admitted with a forecast of `forecast_s` saw its first
  /// token `actual_s` after its arrival, or was dropped at the queue head then: the
  /// forecast's error, for its margin.
  void OnForecastObserved(std::int32_t priority, Seconds forecast_s, Seconds actual_s,
                          std::int32_t prompt_tokens = 0) {
    forecast_errors_.Observe(priority, forecast_s, actual_s, prompt_tokens);
  }
  const ForecastErrors& forecast_errors() const { return forecast_errors_; }
  const FairShare& fair_share() const { return fair_share_; }
  /// An admitted request of `flow` (AdmissionRequest::flow, else its tenant) failed at the
  /// server's request deadline: fair shedding stops counting the flow as starved when most of
  /// its admissions do (fair_share.h).
  void OnFlowFailed(std::string_view flow, Seconds now) { fair_share_.OnFailed(flow, now); }

  /// Feeds the service-rate estimator with one finished engine step.
  void OnStep(const StepSample& sample) { estimator_.OnStep(sample); }

  /// Records an admitted request's size (Decide does this itself; a driver calling
  /// DecidePolicy directly calls it after each admission).
  void OnAdmitted(const AdmissionRequest& request, const AdmissionDecision& decision);

  /// A request finished (stop or length) after generating `output_tokens`; `request` as
  /// admitted (max_tokens as clamped): admission learns output lengths from these alone.
  void OnFinished(const OutputQuery& request, std::int32_t output_tokens) {
    output_lengths_.OnFinished(request, output_tokens);
  }
  /// The output tokens admission expects `request` to generate: max_output_tokens under
  /// ignore_eos, else the mean learned for requests like it (OutputLengths::Mean).
  double ExpectedOutput(const AdmissionRequest& request) const {
    return output_lengths_.Mean(OutputQueryOf(request));
  }
  static OutputQuery OutputQueryOf(const AdmissionRequest& request) {
    return {request.max_output_tokens, request.prompt_tokens, request.ignore_eos};
  }
  const OutputLengths& output_lengths() const { return output_lengths_; }

  /// While draining every request is refused with 503 draining.
  void SetDraining(bool draining) { draining_ = draining; }

  /// W_est for the current state, seconds: max(Q / mu, prefill backlog / prefill
  /// throughput), where Q counts the waiting requests beyond the batch's free slots (those
  /// start at the next step) and mu is ServiceRateEstimate. Waiting requests and backlog are
  /// those queued ahead of the request being admitted when `stats` gives them
  /// (EngineStats::num_waiting_ahead, from Scheduler::StatsAhead under priority scheduling),
  /// else all. 0 when nothing waits ahead; +inf when requests wait for completions and neither
  /// rate is known yet. For a short prompt (`prompt_tokens` within
  /// AdmissionConfig::long_prefill_token_threshold) the long prompts' backlog counts only by
  /// their share of the steps that prefill the short backlog; -1 (unknown) counts it all.
  Seconds QueueDelayEstimate(const EngineStats& stats, std::int32_t prompt_tokens = -1) const;
  /// The prefill tokens that delay a prompt of `prompt_tokens` (-1: unknown), see above.
  double PrefillBacklogAhead(const EngineStats& stats, std::int32_t prompt_tokens) const;
  /// t_prefill_est for a prompt: max(one step, prompt / prefill throughput), seconds, at the
  /// estimator's prefill throughput.
  Seconds PrefillEstimate(std::int32_t prompt_tokens) const;
  /// The same at PrefillRate(stats), plus PromptOverhead().
  Seconds PrefillEstimate(std::int32_t prompt_tokens, const EngineStats& stats) const;
  /// AdmissionConfig::prefill_overhead_per_prompt_s until the estimator has measured prefill
  /// capacity, then 0 (the measured rate includes it), seconds.
  Seconds PromptOverhead() const;
  /// Prefill throughput for a request arriving at `stats`, tokens/s, at the decodes it will
  /// share its steps with, d = running + half the waiting ahead, by the model
  /// AdmissionConfig::prefill_tokens_per_s_by_decodes: once the estimator has measured
  /// capacity, its rate x model(d) / model(the decodes it was measured beside); before, the
  /// larger of model(d) and the estimator's lower bound. The estimator's value alone without a
  /// model.
  double PrefillRate(const EngineStats& stats) const;
  /// Requests the engine can run at once: min(max_num_seqs, KV blocks / the blocks a mean
  /// admitted request holds at its end, ceil((prompt + max output) / block size)). KV-limited
  /// batches otherwise look like free slots and hide a queue (max_num_seqs before any
  /// request was admitted).
  std::int32_t EffectiveSlots(const EngineStats& stats) const;
  /// Of `waiting` requests, those beyond the batch's free slots (EffectiveSlots - running):
  /// the ones that wait for completions rather than start at the next step. What
  /// max_num_queued_reqs bounds and Q in W_est counts.
  std::int32_t QueuedBeyondBatch(std::int32_t waiting, const EngineStats& stats) const;
  /// Predictive: seconds until the KV pool has room for a prompt of `prompt_tokens` (its
  /// blocks plus a block of growth per running sequence) as running requests finish and
  /// free their blocks (mu x blocks held per running request); 0 when it has room now or
  /// nothing runs. Above 0, the request is refused with 429 kv_saturation and at least this
  /// Retry-After: the scheduler would hold it until the room is there.
  Seconds KvRoomWait(std::int32_t prompt_tokens, const EngineStats& stats) const;
  /// Decode step time the request deadline check assumes, seconds (see
  /// AdmissionConfig::decode_step_s_by_batch), times stats.step_pace: live, steps on a busy
  /// machine run slower than modelled, and requests planned at the model's pace ran into the
  /// deadline (504).
  Seconds DecodeStepEstimate(const EngineStats& stats) const;
  /// The decode step time of a full batch (EffectiveSlots decodes) times stats.step_pace,
  /// seconds: what a clamped request is planned at.
  Seconds FullBatchStepEstimate(const EngineStats& stats) const;
  /// mu, requests/s: the measured mu_hat; before the first measurement, a cold-start prior
  /// EffectiveSlots / (mean max output tokens x step time) from the admitted requests so far
  /// and the modelled step time (0 before any request was admitted).
  double ServiceRateEstimate(const EngineStats& stats) const;

  /// Under priority scheduling (AdmissionConfig::priority_aging_s > 0), the admission rate of
  /// each class more urgent than `priority` at `now`, most urgent first (exponentially
  /// weighted, time constant class_rate_time_constant_s): the requests expected to overtake
  /// one of `priority` while it waits. Empty under FCFS.
  std::vector<ClassRateEstimate> UrgentClassRates(std::int32_t priority, Seconds now) const;
  /// Running means of the admitted requests' prompt and expected output tokens (0 before
  /// any was admitted).
  double mean_prompt_tokens() const { return mean_prompt_tokens_; }
  double mean_output_tokens() const { return mean_output_tokens_; }

  const AdmissionConfig& config() const { return config_; }
  const ServiceEstimator& estimator() const { return estimator_; }

  /// A refusal for `reason` (its RefusalVerdict) with Retry-After in whole seconds in
  /// [1, 3600]; the rest of `base` (estimates, max_output_tokens) is kept.
  static AdmissionDecision Refusal(OverloadReason reason, Seconds retry_after_s,
                                   AdmissionDecision base = {});

 private:
  AdmissionDecision Reject(OverloadReason reason, Seconds retry_after_s,
                           const AdmissionDecision& base) const {
    return Refusal(reason, retry_after_s, base);
  }

  AdmissionConfig config_;
  ServiceEstimator estimator_;
  OutputLengths output_lengths_;
  ForecastErrors forecast_errors_;
  FairShare fair_share_;
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, TokenBucket, StringHash, std::equal_to<>> buckets_;
  bool draining_ = false;
  /// W_est for a request of `priority` plus the time to serve the more urgent requests
  /// expected to overtake it (AdmissionConfig::priority_aging_s); `w` itself when none.
  Seconds WithOvertakers(Seconds w, std::int32_t priority, const EngineStats& stats,
                         Seconds now) const;
  /// The forecast policy's TTFT for `request` (the overtakers are in the forecast): sets d's
  /// ttft_forecast_s, ttft_margin_s and queue_delay_est_s (forecast - t_prefill_est, or W_est
  /// beyond the horizon); returns the TTFT to plan with (forecast + margin; kNever beyond the
  /// horizon).
  Seconds ForecastTtft(const AdmissionRequest& request, const TtftForecastFn& forecast,
                       AdmissionDecision* d) const;
  void CountAdmission(std::int32_t priority, Seconds now);
  /// Fair shedding (fair_share.h): counts the request under its flow and turns an admission
  /// into a 429 fair_share when its flow must yield to a starved one.
  AdmissionDecision ShareFairly(const AdmissionRequest& request, AdmissionDecision d, Seconds now);
  /// prefill_tokens_per_s_by_decodes at `decodes` (interpolated, clamped to the table; the
  /// table is not empty).
  double ModelPrefillRate(double decodes) const;

  struct ClassRate {
    double count = 0;  ///< admissions, exponentially decayed
    Seconds first_s = 0;
    Seconds last_s = 0;
    /// `count` decayed from last_s to `now` with time constant `tau_s`.
    double CountAt(Seconds now, Seconds tau_s) const {
      return count * std::exp(-std::max(0.0, now - last_s) / tau_s);
    }
  };
  static constexpr std::size_t kMaxTrackedClasses = 256;
  std::map<std::int32_t, ClassRate> class_rates_;  // by priority class, at most the above
  double mean_prompt_tokens_ = 0;  // running means over admitted requests (0 = none yet)
  double mean_output_tokens_ = 0;  // of their expected output (ExpectedOutput)
};

}  // namespace spillway
